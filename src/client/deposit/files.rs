//! The folder's files as the run deposits them: the regular files directly in it, by name, without
//! hidden files (the state file among them) and without the report being written there. Every
//! name is checked before anything is sent. A link is followed only to a file of the folder
//! itself: one leading elsewhere (`/etc/…`, a home directory) would send that file to the service.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The longest `externalRef` the service accepts, in bytes.
pub const MAX_NAME_BYTES: usize = 255;
/// The largest document the service accepts (10 Mo); a larger file is refused without sending it.
pub const MAX_DOCUMENT_BYTES: u64 = 10_000_000;

/// Why the folder cannot be deposited.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("cannot read the folder {path}: {source}")]
    Folder { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a folder")]
    NotAFolder { path: PathBuf },
    #[error("the file name {name:?} is not UTF-8: it cannot be a document's externalRef; rename it")]
    NotUtf8 { name: String },
    #[error("the file name {name:?} is {len} bytes, over the {MAX_NAME_BYTES} an externalRef may have; rename it")]
    NameTooLong { name: String, len: usize },
    #[error("the folder {path} has no file to deposit")]
    Empty { path: PathBuf },
    #[error("{name:?} is a link to a file outside the folder; copy the file into the folder to deposit it")]
    LinkOutside { name: String },
}

/// The names of the files to deposit from `dir`, sorted, leaving out `skip` (the state file and
/// the report, when they are in the folder).
pub fn list(dir: &Path, skip: &[PathBuf]) -> Result<Vec<String>, FilesError> {
    let folder = |source| FilesError::Folder {
        path: dir.to_owned(),
        source,
    };
    let metadata = std::fs::metadata(dir).map_err(folder)?;
    if !metadata.is_dir() {
        return Err(FilesError::NotAFolder { path: dir.to_owned() });
    }
    let skip: Vec<PathBuf> = skip.iter().filter_map(|p| absolute(p)).collect();
    let inside = std::fs::canonicalize(dir).map_err(folder)?;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(folder)? {
        let entry = entry.map_err(folder)?;
        let raw = entry.file_name();
        if raw.as_encoded_bytes().first() == Some(&b'.') {
            continue;
        }
        // Through links: a link to a regular file is a file of the folder.
        let is_file = std::fs::metadata(entry.path()).map(|m| m.is_file()).unwrap_or(false);
        if !is_file || absolute(&entry.path()).is_some_and(|p| skip.contains(&p)) {
            continue;
        }
        let name = raw.into_string().map_err(|raw| FilesError::NotUtf8 {
            name: raw.to_string_lossy().into_owned(),
        })?;
        if resolve_inside(&inside, &name).is_err() {
            return Err(FilesError::LinkOutside { name });
        }
        names.push(check_name(name)?);
    }
    if names.is_empty() {
        return Err(FilesError::Empty { path: dir.to_owned() });
    }
    names.sort();
    Ok(names)
}

/// Opens file `name` of `dir` for reading, through a link only to a file of `dir` itself; the
/// check is made again when the file is read, since the folder may have changed since it was listed.
pub fn open_inside(dir: &Path, name: &str) -> io::Result<File> {
    let inside = std::fs::canonicalize(dir)?;
    let resolved = resolve_inside(&inside, name)?;
    // The resolved path has no link left: one put there since is refused, not followed.
    common::private_fs::no_follow(std::fs::OpenOptions::new().read(true)).open(resolved)
}

/// Where `name` in the folder `inside` (canonical) leads, when that is a file of the folder.
fn resolve_inside(inside: &Path, name: &str) -> io::Result<PathBuf> {
    let resolved = std::fs::canonicalize(inside.join(name))?;
    if resolved.parent() != Some(inside) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "a link out of the folder"));
    }
    Ok(resolved)
}

/// A name the service takes as an `externalRef`: at most 255 bytes (most file systems allow
/// no more, some do).
fn check_name(name: String) -> Result<String, FilesError> {
    if name.len() > MAX_NAME_BYTES {
        return Err(FilesError::NameTooLong { len: name.len(), name });
    }
    Ok(name)
}

/// `path` made absolute through its folder (the file itself may not exist yet).
fn absolute(path: &Path) -> Option<PathBuf> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(path.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_visible_files_by_name_without_the_skipped_ones() {
        let dir = std::env::temp_dir().join(format!("sceau-files-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for name in ["b.png", "a.png", ".hidden", "results.csv", "sub/c.png"] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        let listed = list(&dir, &[dir.join(".sceau-deposit.jsonl"), dir.join("results.csv")]).unwrap();
        assert_eq!(listed, ["a.png", "b.png"]);

        assert_eq!(check_name("é".repeat(127)).unwrap().len(), 254);
        assert!(matches!(check_name("é".repeat(128)), Err(FilesError::NameTooLong { len: 256, .. })));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(list(&dir, &[]).unwrap_err().to_string().contains("cannot read the folder"));
    }

    #[test]
    fn links_are_followed_only_to_files_of_the_folder() {
        let root = std::env::temp_dir().join(format!("sceau-links-{}", uuid::Uuid::new_v4()));
        let dir = root.join("lot");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.png"), b"inside").unwrap();
        std::fs::write(root.join("secret.txt"), b"outside").unwrap();
        std::os::unix::fs::symlink(dir.join("a.png"), dir.join("b.png")).unwrap();
        assert_eq!(list(&dir, &[]).unwrap(), ["a.png", "b.png"]);
        let mut read = String::new();
        std::io::Read::read_to_string(&mut open_inside(&dir, "b.png").unwrap(), &mut read).unwrap();
        assert_eq!(read, "inside");

        std::os::unix::fs::symlink(root.join("secret.txt"), dir.join("c.png")).unwrap();
        let refused = list(&dir, &[]).unwrap_err();
        assert!(matches!(&refused, FilesError::LinkOutside { name } if name == "c.png"), "{refused}");
        assert!(open_inside(&dir, "c.png").is_err(), "nor read when asked by name");
        assert!(open_inside(&dir, "../secret.txt").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
