//! Shared core of Sceau: configuration, the SQLite store, encryption, the queue and deadline
//! traits with their backends, and telemetry. The domain lives in the `domain` crate, which every
//! crate imports by name.
pub mod blobs;
pub mod capabilities;
pub mod config;
pub mod crypto;
pub mod deadlines;
pub mod document;
pub mod logo;
pub mod mail;
pub mod membership;
pub mod messages;
pub mod pdf_prescan;
pub mod photo_quality;
pub mod private_fs;
pub mod qr;
pub mod queue;
pub mod redis;
pub mod sandbox;
pub mod store;
pub mod telemetry;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod test_fixtures;
