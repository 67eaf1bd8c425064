//! Shared core of Sceau: the domain vocabulary, identifiers, configuration, the SQLite store,
//! encryption, the queue and deadline traits with their backends, and telemetry.
pub mod analysis;
pub mod blobs;
pub mod catalogue;
pub mod config;
pub mod crypto;
pub mod deadlines;
pub mod decision;
pub mod document;
pub mod domain;
pub mod ids;
pub mod messages;
pub mod model;
pub mod pdf_prescan;
pub mod postal;
pub mod private_fs;
pub mod queue;
pub mod redis;
pub mod sandbox;
pub mod store;
pub mod telemetry;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod test_fixtures;
pub mod time;
