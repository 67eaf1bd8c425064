//! The contract between the job loop and an analysis engine, and how an engine's failures map to
//! the item error codes of `API.md` (and whether the job loop should retry them).

use async_trait::async_trait;
use domain::analysis::{AnalysisInput, AnalysisReport};
use domain::vocabulary::ItemError;

/// Analyses one document. A report is a finding, even an `analyse_impossible` one; an error means
/// the analysis could not run on these bytes.
#[async_trait]
pub trait Engine: Send + Sync {
    async fn analyse(&self, input: AnalysisInput) -> Result<AnalysisReport, EngineError>;

    /// A short stable name, for logs and metrics.
    fn name(&self) -> &'static str;
}

/// Why an engine produced no report. Messages are one sentence and never quote the document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum EngineError {
    /// The bytes cannot be decoded as their file type at all: permanent.
    #[error("{0}")]
    Unreadable(String),
    /// A file the service does not analyse (type, page count, size): permanent.
    #[error("{0}")]
    Unsupported(String),
    /// The engine itself failed: retried, then reported as `engine_failure`.
    #[error("{0}")]
    Failure(String),
    /// The machine could not give the analysis its CPU before the wall-clock backstop: not the
    /// document's fault, and not retried in place (the delivery must end within its lease): the
    /// job goes back to the queue, and is reported as `engine_failure` on its last delivery.
    #[error("{0}")]
    Overloaded(String),
}

impl EngineError {
    /// The item error recorded once the job gives up on this document.
    pub fn item_error(&self) -> ItemError {
        match self {
            Self::Unreadable(_) => ItemError::UnreadableDocument,
            Self::Unsupported(_) => ItemError::UnsupportedDocument,
            Self::Failure(_) | Self::Overloaded(_) => ItemError::EngineFailure,
        }
    }

    /// Only engine failures may succeed on another try within the delivery; the document's own
    /// faults never do, and an overloaded machine gets the job back later through the queue.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Failure(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_to_item_errors() {
        let unreadable = EngineError::Unreadable("x".into());
        assert_eq!(unreadable.item_error(), ItemError::UnreadableDocument);
        assert!(!unreadable.is_retryable());
        let unsupported = EngineError::Unsupported("x".into());
        assert_eq!(unsupported.item_error(), ItemError::UnsupportedDocument);
        let failure = EngineError::Failure("x".into());
        assert_eq!(failure.item_error(), ItemError::EngineFailure);
        assert!(failure.is_retryable());
        let overloaded = EngineError::Overloaded("x".into());
        assert_eq!(overloaded.item_error(), ItemError::EngineFailure);
        assert!(!overloaded.is_retryable());
    }
}
