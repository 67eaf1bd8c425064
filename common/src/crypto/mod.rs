//! Cryptography of Sceau: envelope encryption of documents at rest, API key hashing and
//! Standard Webhooks signatures, all built on `ring`; and the portal's credentials: member
//! passwords (argon2id), TOTP two-factor with its recovery codes, session and invitation tokens.
pub mod api_key;
pub mod envelope;
pub mod password;
pub mod recovery_codes;
pub mod session_token;
pub mod totp;
pub mod webhook_signature;
