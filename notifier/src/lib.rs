//! notifier
