//! Cryptography of Sceau: envelope encryption of documents at rest, API key hashing and
//! Standard Webhooks signatures. Everything is built on `ring`.
pub mod api_key;
pub mod envelope;
pub mod webhook_signature;
