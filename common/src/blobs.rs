//! The blob store: encrypted files on disk (a directory the gateway and workers share). Blob names
//! are random; content is sealed by [`MasterKeys`] and bound to its owner by associated data.

use crate::crypto::envelope::{EnvelopeError, MasterKeys};
use crate::store::Store;
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

impl BlobError {
    /// The file system is full (or the quota reached): an outage, not a bug; the same write
    /// succeeds once space is back.
    pub fn is_out_of_space(&self) -> bool {
        matches!(self, BlobError::Io(e) if is_out_of_space(e))
    }
}

/// ENOSPC or EDQUOT.
pub fn is_out_of_space(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
}

#[derive(Clone)]
pub struct BlobStore {
    root: PathBuf,
    /// The file system of `root`, to know whether a database flush covers a blob.
    device: u64,
    keys: Arc<MasterKeys>,
}

/// Whether a write is flushed to disk before `put` returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flush {
    Now,
    /// The caller's next store write flushes the file system (see `store::writer`).
    WithTheRecord,
}

impl BlobStore {
    pub fn new(root: PathBuf, keys: Arc<MasterKeys>) -> std::io::Result<Self> {
        crate::private_fs::create_dir(&root)?;
        // Every shard directory up front: a write never creates one on a request's path.
        for shard in 0..=u8::MAX {
            crate::private_fs::create_dir(&root.join(format!("{shard:02x}")))?;
        }
        let device = crate::store::device_of(&root)?;
        Ok(Self { root, device, keys })
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

    /// Encrypts and writes durably (temp file, fsync, rename). On a failure (a full disk) nothing
    /// is left behind: the temporary file is removed.
    pub async fn put(&self, name: &str, context: &str, plaintext: Vec<u8>) -> Result<(), BlobError> {
        self.write(name, context, plaintext, Flush::Now).await
    }

    /// Encrypts and writes a file that `store.write(…)` records next. On the database's file
    /// system it is not flushed here: that write's flush makes the file and its row durable
    /// together, one flush instead of two. Elsewhere it is flushed as by [`BlobStore::put`].
    /// Either way the file is durable once the recording write has returned `Ok`.
    pub async fn put_then_record(&self, store: &Store, name: &str, context: &str, plaintext: Vec<u8>) -> Result<(), BlobError> {
        let flush = self.flush_for(store);
        self.write(name, context, plaintext, flush).await
    }

    /// [`BlobStore::put_then_record`] for code already on a blocking thread.
    pub fn put_then_record_here(&self, store: &Store, name: &str, context: &str, plaintext: Vec<u8>) -> Result<(), BlobError> {
        let path = self.path(name)?;
        Ok(seal_and_write(&self.keys, &path, context, plaintext, self.flush_for(store))?)
    }

    fn flush_for(&self, store: &Store) -> Flush {
        if store.device() == self.device {
            Flush::WithTheRecord
        } else {
            Flush::Now
        }
    }

    /// Seals in place and writes on a blocking thread: AES over 10 MB is not for the runtime's.
    async fn write(&self, name: &str, context: &str, plaintext: Vec<u8>, flush: Flush) -> Result<(), BlobError> {
        let path = self.path(name)?;
        let (keys, context) = (self.keys.clone(), context.to_owned());
        tokio::task::spawn_blocking(move || seal_and_write(&keys, &path, &context, plaintext, flush))
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

/// Encrypts `plaintext` where it lies, then writes the blob: header, ciphertext, tag.
fn seal_and_write(keys: &MasterKeys, path: &Path, context: &str, mut plaintext: Vec<u8>, flush: Flush) -> std::io::Result<()> {
    let sealed = keys.seal_in_place(context, &mut plaintext);
    let parts: [&[u8]; 3] = [&sealed.header, &plaintext, &sealed.tag];
    match flush {
        Flush::Now => write_atomically(path, &parts),
        Flush::WithTheRecord => write_unrecorded(path, &parts),
    }
}

/// Writes `parts` one after the other into a new file, flushed, then renamed into place: a
/// reader never sees a partial blob under its name.
fn write_atomically(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let written = create_in_shard(&tmp, crate::private_fs::file_options()).and_then(|mut f| {
        write_parts(&mut f, parts)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    });
    if written.is_err() {
        // Removing frees the space a partial write took; a file never created is not an error.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Writes `parts` into a new file under its final name, unflushed: no row names it until the
/// recording write commits (and flushes it), so no reader can meet it partial, and a crash
/// before that leaves only a file no row refers to. Saves the rename of [`write_atomically`].
fn write_unrecorded(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let mut options = crate::private_fs::file_options();
    options.create_new(true);
    // A name already taken is refused by `create_new` and left alone.
    let mut file = create_in_shard(path, options)?;
    let written = write_parts(&mut file, parts);
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

fn write_parts(file: &mut std::fs::File, parts: &[&[u8]]) -> std::io::Result<()> {
    use std::io::Write;
    parts.iter().try_for_each(|part| file.write_all(part))
}

/// Opens `path` with `options`, creating its shard directory when it is missing (the store
/// creates them all when it opens; one may have been removed by hand since).
fn create_in_shard(path: &Path, options: std::fs::OpenOptions) -> std::io::Result<std::fs::File> {
    match options.open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path.parent().ok_or_else(|| std::io::Error::other("blob path has no parent"))?;
            crate::private_fs::create_dir(dir)?;
            options.open(path)
        }
        opened => opened,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_and_edquot_are_out_of_space() {
        for (errno, full) in [(28, true), (122, true), (13, false), (5, false)] {
            let error = BlobError::Io(std::io::Error::from_raw_os_error(errno));
            assert_eq!(error.is_out_of_space(), full, "errno {errno}");
        }
        assert!(!BlobError::BadName.is_out_of_space());
    }

    /// A write that fails leaves no temporary file behind (here the rename fails: the target is a
    /// directory, which is not empty).
    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("sceau-blobs-{}", crate::ids::random_hex(8)));
        let target = dir.join("ab").join("abcdef");
        std::fs::create_dir_all(target.join("occupied")).unwrap();
        assert!(write_atomically(&target, &[b"sealed bytes"]).is_err());
        let left: Vec<_> = std::fs::read_dir(dir.join("ab"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["abcdef"], "only the directory that was there");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A blob flushed by its record is written under its name, in a shard directory made again
    /// if it went missing, and never over another file.
    #[test]
    fn an_unrecorded_write_creates_and_never_overwrites() {
        let dir = std::env::temp_dir().join(format!("sceau-blobs-{}", crate::ids::random_hex(8)));
        let target = dir.join("cd").join("cdef");
        write_unrecorded(&target, &[b"sealed ", b"bytes"]).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"sealed bytes");
        let again = write_unrecorded(&target, &[b"other"]).unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&target).unwrap(), b"sealed bytes", "left alone");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn opening_the_store_makes_every_shard() {
        let dir = std::env::temp_dir().join(format!("sceau-blobs-{}", crate::ids::random_hex(8)));
        let keys = Arc::new(MasterKeys::ephemeral());
        BlobStore::new(dir.clone(), keys).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 256);
        assert!(dir.join("00").is_dir() && dir.join("ff").is_dir());
        let _ = std::fs::remove_dir_all(dir);
    }
}
