//! `sceau admin review show --export DIR`: a reviewer's copy of a consultation's images, decrypted
//! into files (never printed). Refuses before decrypting anything when a target file exists, records
//! the export in the audit log, and writes owner-only files it never lets overwrite another.

use super::Ctx;
use common::blobs::{BlobError, BlobStore};
use common::config::Config;
use common::crypto::envelope::{EnvelopeError, MasterKeys};
use common::store::consultations::{self, ImageRef};
use common::store::{audit, RepoError};
use domain::ids::{CompanyId, ConsultationId};
use domain::team::AuditAction;
use domain::vocabulary::ImageSide;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// Why an export was refused or failed; every case is one clear line for the operator.
#[derive(Debug)]
pub(super) enum ExportError {
    Repo(RepoError),
    Keys(EnvelopeError),
    /// The blob store cannot be opened (a missing directory, an unreachable bucket).
    Blobs(BlobError),
    Blob {
        side: ImageSide,
        source: BlobError,
    },
    Exists(PathBuf),
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Repo(e) => write!(f, "{e}"),
            Self::Keys(e) => write!(f, "cannot open the master keys: {e}"),
            Self::Blobs(e) => write!(f, "cannot open the blob store: {e}"),
            Self::Blob { side, source } => write!(f, "cannot read the {side} image: {source}"),
            Self::Exists(path) => write!(f, "{} already exists; the export never overwrites a file", path.display()),
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Repo(e) => Some(e),
            Self::Keys(e) => Some(e),
            Self::Blobs(e) => Some(e),
            Self::Blob { source, .. } => Some(source),
            Self::Io { source, .. } => Some(source),
            Self::Exists(_) => None,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What the export did for one side, as printed.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum Exported {
    Written { side: ImageSide, path: String, bytes: usize },
    Purged { side: ImageSide, purged: bool },
}

/// One side to export, before decryption: gone, or where its file will go.
enum Planned {
    Purged(ImageSide),
    Stored { side: ImageSide, blob: String, path: PathBuf },
}

/// One side, decrypted and ready to be written (or found gone meanwhile).
enum Ready {
    Purged(ImageSide),
    File { side: ImageSide, path: PathBuf, bytes: Vec<u8> },
}

/// Writes the consultation's images, decrypted, into `dir`. Nothing is written when a target
/// file exists; the audit records the export before the files appear.
pub(super) async fn export(
    ctx: &Ctx,
    company: &CompanyId,
    id: &ConsultationId,
    images: Vec<(ImageSide, ImageRef)>,
    dir: &Path,
) -> Result<Vec<Exported>, ExportError> {
    let dir = prepare_dir(dir).await?;
    let planned = plan(&dir, id, images);
    refuse_existing(&planned).await?;
    let ready = decrypt(&ctx.config, company, id, planned).await?;
    record_export(ctx, company, id, &ready).await?;
    write_files(&ready).await?;
    Ok(ready.into_iter().map(report).collect())
}

/// Creates the directory if missing (owner-only: it will hold identity documents) and returns
/// its absolute path, so the printed paths are unambiguous.
async fn prepare_dir(dir: &Path) -> Result<PathBuf, ExportError> {
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir).await.map_err(io_error(dir))?;
    tokio::fs::canonicalize(dir).await.map_err(io_error(dir))
}

/// `<id>-<side>.<ext>`, the extension from the stored content type.
fn plan(dir: &Path, id: &ConsultationId, images: Vec<(ImageSide, ImageRef)>) -> Vec<Planned> {
    images
        .into_iter()
        .map(|(side, image)| match image {
            ImageRef::Purged => Planned::Purged(side),
            ImageRef::Stored { blob, kind } => Planned::Stored {
                side,
                blob,
                path: dir.join(format!("{id}-{side}.{}", kind.extension())),
            },
        })
        .collect()
}

/// Refuses before decrypting anything, so a refused export leaves no trace in the audit log.
async fn refuse_existing(planned: &[Planned]) -> Result<(), ExportError> {
    for slot in planned {
        if let Planned::Stored { path, .. } = slot {
            // `symlink_metadata`: a dangling link is a file in the way too.
            if tokio::fs::symlink_metadata(path).await.is_ok() {
                return Err(ExportError::Exists(path.clone()));
            }
        }
    }
    Ok(())
}

/// Opens the blob store the way the service does, without ever creating a master key: if there
/// is none, there cannot be any image to read.
async fn open_blobs(config: &Config) -> Result<BlobStore, ExportError> {
    let keys = MasterKeys::open_existing(&config.master_key_path()).map_err(ExportError::Keys)?;
    BlobStore::open(&config.blob_location(), Arc::new(keys))
        .await
        .map_err(ExportError::Blobs)
}

async fn decrypt(config: &Config, company: &CompanyId, id: &ConsultationId, planned: Vec<Planned>) -> Result<Vec<Ready>, ExportError> {
    let blobs = open_blobs(config).await?;
    let mut ready = Vec::with_capacity(planned.len());
    for slot in planned {
        ready.push(match slot {
            Planned::Purged(side) => Ready::Purged(side),
            Planned::Stored { side, blob, path } => {
                let context = consultations::image_context(company, id, side);
                match blobs.get(&blob, &context).await {
                    Ok(bytes) => Ready::File { side, path, bytes },
                    // The sweeper deletes the file before marking the image purged: a purge under way.
                    Err(BlobError::Missing) => Ready::Purged(side),
                    Err(source) => return Err(ExportError::Blob { side, source }),
                }
            }
        });
    }
    Ok(ready)
}

/// Image downloads are audited; an operator's export is one too (no key, no IP: the CLI).
async fn record_export(ctx: &Ctx, company: &CompanyId, id: &ConsultationId, ready: &[Ready]) -> Result<(), ExportError> {
    let now = chrono::Utc::now();
    let entries: Vec<audit::AuditEntry> = ready
        .iter()
        .filter_map(|slot| match slot {
            Ready::File { side, .. } => Some(audit::AuditEntry::new(
                AuditAction::ImageExported,
                format!("{id}/{side}"),
                &audit::Actor::Operator,
                None,
                now,
            )),
            _ => None,
        })
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let company = company.clone();
    ctx.store
        .write(move |tx| entries.iter().try_for_each(|e| audit::record(tx, &company, e)))
        .await
        .map_err(ExportError::Repo)
}

/// Writes every decrypted image; on a failure, removes the files this export created so a retry
/// does not trip over them.
async fn write_files(ready: &[Ready]) -> Result<(), ExportError> {
    let mut created: Vec<&Path> = Vec::new();
    for slot in ready {
        let Ready::File { path, bytes, .. } = slot else { continue };
        if let Err(e) = write_new(path, bytes, &mut created).await {
            for path in created {
                let _ = tokio::fs::remove_file(path).await;
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Creates the file (never replacing one, even if it appeared since the check), owner-only.
async fn write_new<'a>(path: &'a Path, bytes: &[u8], created: &mut Vec<&'a Path>) -> Result<(), ExportError> {
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(path).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => ExportError::Exists(path.to_owned()),
        _ => io_error(path)(e),
    })?;
    created.push(path);
    file.write_all(bytes).await.map_err(io_error(path))?;
    file.sync_all().await.map_err(io_error(path))
}

fn report(slot: Ready) -> Exported {
    match slot {
        Ready::Purged(side) => Exported::Purged { side, purged: true },
        Ready::File { side, path, bytes } => Exported::Written {
            side,
            path: path.display().to_string(),
            bytes: bytes.len(),
        },
    }
}
