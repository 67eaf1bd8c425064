//! What every handler shares: the store, the blob store, the master keys, settings, and the wake-up
//! of the outbox relay.

use crate::client_addr::TrustedProxies;
use crate::rate_limit::{EdgeLimits, RateLimiter};
use common::blobs::BlobStore;
use common::crypto::envelope::MasterKeys;
use common::store::Store;
use std::sync::Arc;
use tokio::sync::Notify;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub blobs: BlobStore,
    pub keys: Arc<MasterKeys>,
    /// Base of links handed to customers (journey, authenticity).
    pub public_base: String,
    pub volume_limit: u64,
    /// Open window and completion window of batches.
    pub batch_window: std::time::Duration,
    /// Longest a request may last, its body included (`SCEAU_REQUEST_TIMEOUT_SECONDS`).
    pub request_timeout: std::time::Duration,
    pub webhook_allow_hosts: Arc<Vec<String>>,
    pub realtime_limiter: Arc<RateLimiter>,
    /// Limits keyed by client address or journey session.
    pub edge_limits: Arc<EdgeLimits>,
    /// Whose `X-Forwarded-For` names the client (see `client_addr`).
    pub trusted_proxies: Arc<TrustedProxies>,
    /// Poked after a write that added outbox rows, so jobs leave at once.
    pub outbox_wake: Arc<Notify>,
    /// Where every argon2 hash and check of a portal password runs (see `password_pool`).
    pub passwords: Arc<crate::password_pool::PasswordPool>,
    /// Children that parse PDFs for the page count at the edge (see `inspect`).
    pub sandbox: common::sandbox::Sandbox,
    /// Each sender's one turn at those children.
    pub edge_turns: Arc<crate::edge_turns::EdgeTurns>,
    /// Whether journeys compare the selfie with the portrait (`SCEAU_FACE_MATCH`): then the
    /// quick look asks for a face on the selfie.
    pub face_match: bool,
    /// E-mails invitations when `SCEAU_SMTP_URL` is set.
    pub mailer: Option<common::mail::Mailer>,
    /// The analysis engine's capabilities on this machine, for `/readyz`.
    pub capabilities: Arc<dyn common::capabilities::CapabilityReport>,
}

impl axum::extract::FromRef<AppState> for Arc<TrustedProxies> {
    fn from_ref(state: &AppState) -> Self {
        state.trusted_proxies.clone()
    }
}
