//! Blobs as files in a local directory (`file://`, the default): sharded by the first two hex
//! digits of their name, written so that no reader ever meets a partial blob, and flushed either
//! on their own or together with the database row that names them.

use std::path::{Path, PathBuf};

/// The directory of blobs and the file system it is on.
#[derive(Clone)]
pub(super) struct DiskBlobs {
    root: PathBuf,
    /// The file system of `root`, to know whether a database flush covers a blob.
    device: u64,
}

/// Whether a write is flushed to disk before it returns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Flush {
    Now,
    /// The caller's next store write flushes the file system (see `store::writer`).
    WithTheRecord,
}

impl DiskBlobs {
    pub(super) fn new(root: PathBuf) -> std::io::Result<Self> {
        crate::private_fs::create_dir(&root)?;
        // Every shard directory up front: a write never creates one on a request's path.
        for shard in 0..=u8::MAX {
            crate::private_fs::create_dir(&root.join(format!("{shard:02x}")))?;
        }
        let device = crate::store::device_of(&root)?;
        Ok(Self { root, device })
    }

    /// Where a (checked) blob name lives.
    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.root.join(&name[..2]).join(name)
    }

    /// A blob recorded by a store on `device` is flushed by that store's write when it shares
    /// its file system: one flush instead of two.
    pub(super) fn flush_for(&self, store_device: u64) -> Flush {
        if store_device == self.device {
            Flush::WithTheRecord
        } else {
            Flush::Now
        }
    }

    pub(super) fn write(&self, name: &str, parts: &[&[u8]], flush: Flush) -> std::io::Result<()> {
        let path = self.path(name);
        match flush {
            Flush::Now => write_atomically(&path, parts),
            Flush::WithTheRecord => write_unrecorded(&path, parts),
        }
    }

    pub(super) async fn read(&self, name: &str) -> std::io::Result<Vec<u8>> {
        tokio::fs::read(self.path(name)).await
    }

    /// Deletes; a blob already gone is not an error (deletion is retried after crashes).
    pub(super) async fn delete(&self, name: &str) -> std::io::Result<()> {
        match tokio::fs::remove_file(self.path(name)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
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
    let written = write_parts(&mut file, parts).map(|()| start_write_back(&file));
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// Hands the file's pages to the disk now, without waiting for them: the flush that makes the
/// file durable with its row then finds them written or on their way, and waits less. (On
/// Linux, `POSIX_FADV_DONTNEED` starts the write-back of dirty pages; pages being written stay
/// cached.) Only a hint: the flush makes the file durable whatever it did.
fn start_write_back(file: &std::fs::File) {
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
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

    fn scratch() -> PathBuf {
        std::env::temp_dir().join(format!("sceau-blobs-{}", domain::ids::random_hex(8)))
    }

    /// A write that fails leaves no temporary file behind (here the rename fails: the target is a
    /// directory, which is not empty).
    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = scratch();
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
        let dir = scratch();
        let target = dir.join("cd").join("cdef");
        write_unrecorded(&target, &[b"sealed ", b"bytes"]).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"sealed bytes");
        let again = write_unrecorded(&target, &[b"other"]).unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&target).unwrap(), b"sealed bytes", "left alone");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn opening_makes_every_shard() {
        let dir = scratch();
        DiskBlobs::new(dir.clone()).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 256);
        assert!(dir.join("00").is_dir() && dir.join("ff").is_dir());
        let _ = std::fs::remove_dir_all(dir);
    }
}
