//! The blob store: encrypted files on disk (a directory the gateway and workers share). Blob names
//! are random; content is sealed by [`MasterKeys`] and bound to its owner by associated data.

use crate::crypto::envelope::{EnvelopeError, MasterKeys};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("blob storage: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    #[error("malformed blob name")]
    BadName,
}

#[derive(Clone)]
pub struct BlobStore {
    root: PathBuf,
    keys: Arc<MasterKeys>,
}

impl BlobStore {
    pub fn new(root: PathBuf, keys: Arc<MasterKeys>) -> std::io::Result<Self> {
        std::fs::create_dir_all(&root)?;
        Ok(Self { root, keys })
    }

    /// A fresh random blob name.
    pub fn new_name() -> String {
        crate::ids::random_hex(32)
    }

    fn path(&self, name: &str) -> Result<PathBuf, BlobError> {
        if name.len() != 32 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(BlobError::BadName);
        }
        Ok(self.root.join(&name[..2]).join(name))
    }

    /// Encrypts and writes durably (temp file, fsync, rename).
    pub async fn put(&self, name: &str, context: &str, plaintext: &[u8]) -> Result<(), BlobError> {
        let path = self.path(name)?;
        let sealed = self.keys.seal(context, plaintext);
        tokio::task::spawn_blocking(move || write_atomically(&path, &sealed))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))??;
        Ok(())
    }

    pub async fn get(&self, name: &str, context: &str) -> Result<Vec<u8>, BlobError> {
        let sealed = tokio::fs::read(self.path(name)?).await?;
        Ok(self.keys.open(context, &sealed)?)
    }

    /// Deletes; a blob already gone is not an error (deletion is retried after crashes).
    pub async fn delete(&self, name: &str) -> Result<(), BlobError> {
        match tokio::fs::remove_file(self.path(name)?).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().ok_or_else(|| std::io::Error::other("blob path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}
