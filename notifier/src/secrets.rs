//! Where signing secrets come from. The notifier never reads the store itself (in distributed
//! mode it has none), so the caller hands it this narrow capability.

use async_trait::async_trait;
use domain::ids::CompanyId;

/// Why a company's signing secrets could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The company has no secret (deleted, or never provisioned): waiting will not help, so the
    /// event is dead-lettered and an operator can replay it once the secret exists.
    #[error("the company has no webhook signing secret")]
    Missing,
    /// The store could not answer now: the delivery is tried again shortly, without spending
    /// one of the event's attempts.
    #[error("the webhook signing secrets could not be read")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Gives a company's webhook signing secrets.
#[async_trait]
pub trait SecretSource: Send + Sync {
    /// The current secret first, then the previous one while a rotation is in progress, so a
    /// receiver that still knows only the old secret keeps accepting deliveries.
    async fn signing_secrets(&self, company: &CompanyId) -> Result<Vec<String>, SecretError>;
}
