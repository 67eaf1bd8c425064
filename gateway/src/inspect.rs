//! Page counts at the edge. An image's header is read in-process (only its header: bounded); a
//! PDF is parsed by lopdf, which a hostile file can make allocate without bound, so it is counted in
//! a sandbox child and the gateway never parses one itself.

use crate::error::ApiError;
use common::document::{self, DocumentError, FileKind, PageCountTask};
use common::sandbox::{Sandbox, SandboxError};
use std::time::Duration;

/// Longest page count of one PDF, waiting for a free child included.
const DEADLINE: Duration = Duration::from_secs(10);

/// The file's page count, or why its bytes cannot be counted; `Err` when no child could count.
pub async fn page_count(sandbox: &Sandbox, kind: FileKind, bytes: &[u8]) -> Result<Result<u32, DocumentError>, ApiError> {
    if kind != FileKind::Pdf {
        return Ok(document::page_count(kind, bytes));
    }
    match sandbox.run(&PageCountTask { kind }, &[bytes], DEADLINE).await {
        Ok(counted) => Ok(counted),
        Err(error @ (SandboxError::TimedOut(_) | SandboxError::LimitExceeded(_))) => {
            tracing::warn!(%error, "a PDF exceeded the parser's limits at the edge");
            Ok(Err(DocumentError::TooLarge(
                "the PDF is too complex to be read within the service's limits".to_owned(),
            )))
        }
        Err(error @ (SandboxError::Unavailable(_) | SandboxError::Starved(_))) => {
            tracing::error!(%error, "no sandbox to count the pages of a PDF");
            Err(ApiError::unavailable("The document cannot be checked right now; retry shortly.", 5))
        }
    }
}
