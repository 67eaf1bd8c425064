//! A child's private temporary directory: the only place it may write (pdftoppm reads the PDF
//! and writes the page there). The parent creates it before the child starts and removes it once
//! the child is gone, so a child killed mid-render leaves no customer's page behind.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// A directory of mode 0700 with an unpredictable name, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates one in `root` (the service's temporary directory).
    pub fn create(root: &Path) -> io::Result<Scratch> {
        let root = std::path::absolute(root)?;
        let path = root.join(format!("sceau-sandbox-{}", domain::ids::random_hex(12)));
        // Not recursive: the name must not exist yet, so nobody can have planted it.
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Scratch { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            if error.kind() != io::ErrorKind::NotFound {
                tracing::warn!(%error, path = %self.path.display(), "a sandbox child's temporary directory could not be removed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn it_is_private_and_goes_with_its_guard() {
        let scratch = Scratch::create(&std::env::temp_dir()).unwrap();
        let path = scratch.path().to_path_buf();
        std::fs::write(path.join("page.tif"), b"x").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        drop(scratch);
        assert!(!path.exists());
    }
}
