//! The imported ANTS trust list travels to worker hosts through the blob store: workers share no
//! directory with the gateway, so `sceau admin trust import` (on the gateway's host) publishes the
//! list it checked, sealed by the master key, and every worker copies it into its own data dir at
//! start and then every few seconds. Sealed means authentic: only a holder of the master key
//! (the import, which verified the ANTS signature) can have written it, so the copy is not
//! verified again; a list older than the one a worker uses is left aside. Once the list in a
//! worker's data dir changes (copied here, or imported into a data dir shared with the gateway),
//! its analysis children are renewed: each loaded its list when it started.

use crate::analysis::twoddoc::trust_list::{self, TrustListError};
use common::blobs::{BlobError, BlobStore};
use common::capabilities::{TrustListOrigin, TrustListSummary};
use common::sandbox::Sandbox;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The list's blob: a fixed name, where every other blob's is random.
const BLOB: &str = "00000000000000000000007472757374";
/// The associated data it is sealed with: no document or image can pass for it.
const CONTEXT: &str = "ants-trust-list";

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error("the published trust list is not UTF-8 text")]
    NotText,
    #[error("the published trust list is not one: {0}")]
    NotAList(#[source] TrustListError),
    #[error(transparent)]
    InUse(#[from] TrustListError),
    #[error("cannot write the trust list into {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Makes `xml` (a list just imported and verified) the list workers copy.
pub async fn publish(blobs: &BlobStore, xml: &str) -> Result<(), BlobError> {
    blobs.put(BLOB, CONTEXT, xml.as_bytes().to_vec()).await
}

/// Copies the published list into `data_dir` when it differs from the one there and is not older
/// than the one in use; the summary of what was copied.
pub async fn sync(blobs: &BlobStore, data_dir: &Path) -> Result<Option<TrustListSummary>, SyncError> {
    let published = match blobs.get(BLOB, CONTEXT).await {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| SyncError::NotText)?,
        Err(BlobError::Missing) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    // Reads, parses and writes with a flush: on the blocking pool, not the worker's runtime.
    let here = data_dir.to_owned();
    tokio::task::spawn_blocking(move || copy_unless_older(&published, &here))
        .await
        .map_err(|e| SyncError::Write {
            path: trust_list::imported_path(data_dir),
            source: std::io::Error::other(e.to_string()),
        })?
}

/// The file work of [`sync`].
fn copy_unless_older(published: &str, data_dir: &Path) -> Result<Option<TrustListSummary>, SyncError> {
    let target = trust_list::imported_path(data_dir);
    if std::fs::read_to_string(&target).is_ok_and(|here| here == published) {
        return Ok(None);
    }
    let summary = trust_list::summary(published, TrustListOrigin::Imported).map_err(SyncError::NotAList)?;
    if trust_list::is_older(&summary, &trust_list::in_use(Some(data_dir))?.summary) {
        return Ok(None);
    }
    write_in_place(&target, published.as_bytes()).map_err(|source| SyncError::Write { path: target, source })?;
    Ok(Some(summary))
}

/// Syncs every `interval` until `shutdown`; whenever the list in `data_dir` has changed since the
/// last look, `sandboxes` are renewed, so that the next document is checked against it.
pub async fn run(blobs: BlobStore, data_dir: PathBuf, sandboxes: Vec<Sandbox>, interval: Duration, shutdown: CancellationToken) {
    let mut loaded = trust_list::imported_stamp(&data_dir);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(interval) => {}
        }
        report(sync(&blobs, &data_dir).await);
        let here = trust_list::imported_stamp(&data_dir);
        if here != loaded {
            for sandbox in &sandboxes {
                sandbox.renew().await;
            }
            tracing::info!("analysis children renewed for the ANTS trust list now in the data dir");
            loaded = here;
        }
    }
}

/// One log line per copy or failure.
pub fn report(synced: Result<Option<TrustListSummary>, SyncError>) {
    match synced {
        Ok(Some(list)) => {
            tracing::info!(sequence = list.sequence, issued = %list.issued.format("%Y-%m-%d"), "ANTS trust list copied from the blob store")
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "cannot copy the published ANTS trust list"),
    }
}

/// Written beside its place, flushed, then renamed over it: a child starting meanwhile reads the
/// old list or the new one, never half of one.
fn write_in_place(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = target
        .parent()
        .ok_or_else(|| std::io::Error::other("the trust list's path has no directory"))?;
    common::private_fs::create_dir(dir)?;
    let staged = dir.join(format!(".ants-tsl.xml.{}.synced", std::process::id()));
    let written = common::private_fs::file_options().open(&staged).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&staged, target)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::crypto::envelope::MasterKeys;
    use std::sync::Arc;

    fn scratch(label: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("sceau-trust-sync-{label}-{}", domain::ids::random_hex(6)));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn shipped_xml() -> String {
        trust_list::shipped().unwrap().xml.into_owned()
    }

    #[tokio::test]
    async fn a_published_list_is_copied_once_and_an_older_one_never() {
        let (shared, worker) = (scratch("blobs"), scratch("worker"));
        let blobs = BlobStore::new(shared.join("blobs"), Arc::new(MasterKeys::ephemeral())).unwrap();
        assert!(sync(&blobs, &worker).await.unwrap().is_none(), "nothing published yet");

        let newer = shipped_xml().replacen("<tsl:TSLSequenceNumber>23<", "<tsl:TSLSequenceNumber>24<", 1);
        publish(&blobs, &newer).await.unwrap();
        let copied = sync(&blobs, &worker).await.unwrap().expect("copied");
        assert_eq!(copied.sequence, 24);
        assert_eq!(std::fs::read_to_string(trust_list::imported_path(&worker)).unwrap(), newer);
        assert_eq!(trust_list::in_use(Some(&worker)).unwrap().summary.sequence, 24);
        assert!(sync(&blobs, &worker).await.unwrap().is_none(), "the same list is not copied again");

        publish(&blobs, &shipped_xml()).await.unwrap();
        assert!(sync(&blobs, &worker).await.unwrap().is_none(), "an older list is left aside");
        assert_eq!(std::fs::read_to_string(trust_list::imported_path(&worker)).unwrap(), newer);
        let _ = std::fs::remove_dir_all(shared);
        let _ = std::fs::remove_dir_all(worker);
    }

    #[tokio::test]
    async fn a_list_sealed_under_another_key_is_refused() {
        let (shared, worker) = (scratch("blobs-other"), scratch("worker-other"));
        let forger = BlobStore::new(shared.join("blobs"), Arc::new(MasterKeys::ephemeral())).unwrap();
        publish(&forger, &shipped_xml()).await.unwrap();
        let blobs = BlobStore::new(shared.join("blobs"), Arc::new(MasterKeys::ephemeral())).unwrap();
        assert!(matches!(sync(&blobs, &worker).await, Err(SyncError::Blob(BlobError::Envelope(_)))));
        assert!(!trust_list::imported_path(&worker).exists());
        let _ = std::fs::remove_dir_all(shared);
        let _ = std::fs::remove_dir_all(worker);
    }
}
