//! stub
pub mod client;
pub mod contract;
