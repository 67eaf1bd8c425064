//! Page counts at the edge. An image's header is read in-process (only its header: bounded); a
//! PDF is parsed by lopdf, which a hostile file can make allocate without bound, so it is counted in
//! a sandbox child and the gateway never parses one itself. The children are few and shared: each
//! sender holds at most one at a time (see `edge_turns`), a count gets little CPU time, and a wait
//! for a child is short, then refused with Retry-After.

use crate::edge_turns::{EdgeTurns, Sender};
use crate::error::ApiError;
use common::document::{self, DocumentError, FileKind, PageCountTask};
use common::photo_quality::QualityTask;
use common::sandbox::{Sandbox, SandboxError};
use domain::journey::UploadWarning;
use std::time::{Duration, Instant};

/// CPU time one PDF's page count may use: a genuine one-page PDF takes milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(2);
/// Wall-clock time the count may take, whatever its CPU time (a child starved of the CPU).
pub const BACKSTOP: Duration = Duration::from_secs(4);
/// Longest wait for the sender's previous file and then for a free child.
const WAIT: Duration = Duration::from_secs(3);
/// Retry-After of a file that found no child in time.
const RETRY_AFTER_SECONDS: u64 = 5;

/// The file's page count, or why its bytes cannot be counted; `Err` when no child could count.
pub async fn page_count(
    sandbox: &Sandbox,
    turns: &EdgeTurns,
    sender: Sender,
    kind: FileKind,
    bytes: &[u8],
) -> Result<Result<u32, DocumentError>, ApiError> {
    if kind != FileKind::Pdf {
        return Ok(document::page_count(kind, bytes));
    }
    let started = Instant::now();
    let busy = || ApiError::unavailable("Too many documents are being checked; retry shortly.", RETRY_AFTER_SECONDS);
    let Some(_turn) = turns.take(sender, WAIT).await else {
        tracing::warn!("a PDF waited too long for its sender's previous one at the edge");
        return Err(busy());
    };
    let wait = WAIT.saturating_sub(started.elapsed());
    match sandbox.run_within(&PageCountTask { kind }, &[bytes], DEADLINE, wait).await {
        Ok(counted) => Ok(counted),
        Err(error @ (SandboxError::TimedOut(_) | SandboxError::LimitExceeded(_))) => {
            tracing::warn!(%error, "a PDF exceeded the parser's limits at the edge");
            Ok(Err(DocumentError::TooLarge(
                "the PDF is too complex to be read within the service's limits".to_owned(),
            )))
        }
        Err(error @ SandboxError::Busy(_)) => {
            tracing::warn!(%error, "a PDF found no free parser at the edge");
            Err(busy())
        }
        Err(error @ (SandboxError::Unavailable(_) | SandboxError::Starved(_))) => {
            tracing::error!(%error, "no sandbox to count the pages of a PDF");
            Err(ApiError::unavailable(
                "The document cannot be checked right now; retry shortly.",
                RETRY_AFTER_SECONDS,
            ))
        }
    }
}

/// CPU time the quick look at a photo may take: decoding a 12-megapixel JPEG and measuring it at
/// 800 px takes about half a second unoptimised; reading a zone and looking for a face at four
/// quarter turns a few tenths more.
pub const QUALITY_DEADLINE: Duration = Duration::from_secs(3);

/// Longest wait for a child to look at a photo: advice is not worth keeping the customer waiting,
/// nor holding a child that a PDF's page count needs.
const QUALITY_WAIT: Duration = Duration::from_secs(1);

/// The quick look at a journey photo (`common::photo_quality`, `worker::analysis::quick_look`), in
/// a sandbox child. It only ever adds advice: when no child is free in time, or the look fails,
/// the answer is "nothing to say", and the upload stands.
pub async fn photo_warnings(sandbox: &Sandbox, turns: &EdgeTurns, sender: Sender, task: QualityTask, bytes: &[u8]) -> Vec<UploadWarning> {
    let started = Instant::now();
    let Some(_turn) = turns.take(sender, QUALITY_WAIT).await else {
        return Vec::new();
    };
    let wait = QUALITY_WAIT.saturating_sub(started.elapsed());
    match sandbox.run_within(&task, &[bytes], QUALITY_DEADLINE, wait).await {
        Ok(Ok(warnings)) => warnings,
        Ok(Err(why)) => {
            tracing::debug!(%why, "a journey photo could not be looked at");
            Vec::new()
        }
        Err(error) => {
            tracing::warn!(%error, "no quick look at a journey photo");
            Vec::new()
        }
    }
}
