//! Sceau's domain, where a newcomer finds the business's words and rules by name: identifiers,
//! vocabularies (verdicts, statuses, categories, anomaly and error codes and their meanings), the batch and
//! journey rules, the decision that follows an analysis, webhook events, timestamps and postal codes. Nothing here touches SQLite, AMQP,
//! Redis or the network, so every other crate can depend on it.
pub mod analysis;
pub mod batch;
pub mod branding;
pub mod catalogue;
pub mod country;
pub mod decision;
pub mod error_code;
pub mod face_match;
pub mod file_kind;
pub mod ids;
pub mod journey;
pub mod key_scopes;
pub mod model;
pub mod postal;
pub mod return_url;
pub mod team;
pub mod test_mode;
pub mod time;
pub mod vocabulary;
pub mod webhook;
