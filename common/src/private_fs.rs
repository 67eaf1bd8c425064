//! The data directory is the service's alone: what it creates there is 0700 (directories) or
//! 0600 (files) whatever the umask, and a master key file anyone else may read or write is
//! refused rather than used.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Whatever this process creates (database, its logs, encrypted files, keys, and what libraries
/// create for it) is for its own user only: 0700 directories, 0600 files. Explicit modes where
/// the service creates files say the same; this covers what it does not create itself.
pub fn private_by_default() {
    use nix::sys::stat::{umask, Mode};
    umask(Mode::S_IRWXG | Mode::S_IRWXO);
}

/// Creates `path` and its missing parents with mode 0700 (existing ones are left as they are).
pub fn create_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(path)
}

/// Options that create a file with mode 0600 (write, create, truncate).
pub fn file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true).mode(FILE_MODE);
    options
}

/// Makes `options` refuse to open a symbolic link (`O_NOFOLLOW`): a file the program keeps private
/// (its state, its keys) must not be one an attacker swapped for a link to a file of their choice.
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
}

/// Creates `path` empty with mode 0600 when it does not exist, so what other code opens there
/// (SQLite, which gives its log files the database's mode) starts private.
pub fn touch(path: &Path) -> io::Result<()> {
    OpenOptions::new().append(true).create(true).mode(FILE_MODE).open(path).map(drop)
}

/// Why a key file is refused: group or others may read or write it.
pub fn shared_access(path: &Path) -> io::Result<Option<String>> {
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    Ok((mode & 0o066 != 0).then(|| format!("readable or writable by group or others (mode {mode:04o}); make it private with chmod 600")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_created_is_private_and_a_shared_key_is_named() {
        let root = std::env::temp_dir().join(format!("sceau-private-{}", domain::ids::random_hex(8)));
        create_dir(&root.join("a/b")).unwrap();
        for dir in [root.join("a"), root.join("a/b")] {
            assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let file = root.join("a/f");
        touch(&file).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(shared_access(&file).unwrap(), None);
        for shared in [0o640, 0o604, 0o620, 0o602] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(shared)).unwrap();
            assert!(shared_access(&file).unwrap().is_some(), "{shared:o}");
        }
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert_eq!(shared_access(&file).unwrap(), None, "read-only for the owner is fine");
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn no_follow_refuses_a_link() {
        let root = std::env::temp_dir().join(format!("sceau-nofollow-{}", domain::ids::random_hex(8)));
        create_dir(&root).unwrap();
        let target = root.join("target");
        touch(&target).unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(no_follow(OpenOptions::new().read(true)).open(&target).is_ok());
        let refused = no_follow(OpenOptions::new().read(true)).open(&link).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(nix::libc::ELOOP), "{refused}");
        let _ = std::fs::remove_dir_all(root);
    }
}
