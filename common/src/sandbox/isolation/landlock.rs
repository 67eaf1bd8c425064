//! What of the file system a child may touch, enforced by Landlock: the programs and libraries it
//! runs, the data they read (Tesseract's models, fonts), the few analysis files of the service's
//! configuration (an imported trust list, the operator's certificates and register), read-only,
//! and a private temporary directory. The master key, the database, the blobs and the rest of the
//! data directory are outside every rule: opening them fails with `EACCES`.
//!
//! Best effort: a kernel without Landlock, or with an older version of it, enforces what it knows
//! and the report says so; the seccomp filter is enforced whatever happens here.

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, RestrictionStatus, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The newest Landlock version this code asks for; an older kernel enforces its part of it.
const ABI_WANTED: ABI = ABI::V6;

/// Read-only (and executable) for every child: where programs, libraries and their data live.
/// `/etc` is not among them as a whole (an operator may keep secrets there): only what the
/// dynamic loader, fontconfig and the clock read.
pub const SYSTEM_READABLE: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/fonts",
    "/etc/localtime",
    "/var/cache/fontconfig",
    // Processes outside the child's own domain stay out of reach: Landlock refuses to let it
    // trace them, and so /proc refuses it their memory, environment and files.
    "/proc",
    "/sys/devices/system/cpu",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
];

/// Read-write for every child.
pub const SYSTEM_WRITABLE: &[&str] = &["/dev/null"];

/// The paths a child may use beyond the system's.
#[derive(Debug, Clone, Default)]
pub struct FsPolicy {
    /// Read-only (files, or directories and everything beneath).
    pub readable: Vec<PathBuf>,
    /// Read-write, with files and directories created and removed beneath.
    pub writable: Vec<PathBuf>,
}

/// How much of the file-system policy the kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockStatus {
    /// Every rule, at the Landlock version asked for.
    Full,
    /// An older Landlock: files are confined, some newer rights (such as signal scoping) are not.
    Partial,
    /// No Landlock in this kernel (or it is disabled at boot): files are not confined.
    Unsupported,
}

/// Why the policy could not be applied at all (a kernel without Landlock is not an error).
#[derive(Debug, thiserror::Error)]
#[error("Landlock: {0}")]
pub struct LandlockError(String);

/// Restricts the calling thread, and whatever it starts from now on, to `policy`. TCP is denied
/// too (connect and bind), on kernels that know it, beside the seccomp filter's refusal of sockets.
pub fn restrict(policy: &FsPolicy) -> Result<LandlockStatus, LandlockError> {
    let abi = ABI_WANTED;
    let error = |e: &dyn std::fmt::Display| LandlockError(e.to_string());
    // The binary itself: a panic's backtrace reads its symbols.
    let readable = SYSTEM_READABLE
        .iter()
        .map(PathBuf::from)
        .chain(std::env::current_exe().ok())
        .chain(policy.readable.iter().cloned())
        .filter(|path| path.exists());
    let writable = SYSTEM_WRITABLE
        .iter()
        .map(PathBuf::from)
        .chain(policy.writable.iter().cloned())
        .filter(|path| path.exists());
    let status: RestrictionStatus = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| error(&e))?
        .handle_access(AccessNet::from_all(abi))
        .map_err(|e| error(&e))?
        .scope(Scope::from_all(abi))
        .map_err(|e| error(&e))?
        .create()
        .map_err(|e| error(&e))?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi) | AccessFs::Execute))
        .map_err(|e| error(&e))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(|e| error(&e))?
        .restrict_self()
        .map_err(|e| error(&e))?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => LandlockStatus::Full,
        RulesetStatus::PartiallyEnforced => LandlockStatus::Partial,
        RulesetStatus::NotEnforced => LandlockStatus::Unsupported,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    /// Landlock holds on the thread that restricted itself: each test restricts a thread of its
    /// own and leaves the harness free.
    fn restricted<T: Send + 'static>(policy: FsPolicy, check: impl FnOnce() -> T + Send + 'static) -> (LandlockStatus, T) {
        std::thread::spawn(move || {
            let status = restrict(&policy).expect("the policy applies");
            (status, check())
        })
        .join()
        .expect("the restricted thread")
    }

    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(label: &str) -> Dir {
        let path = std::env::temp_dir().join(format!("sceau-landlock-{label}-{}", domain::ids::random_hex(6)));
        std::fs::create_dir_all(&path).expect("test dir");
        Dir(path)
    }

    #[test]
    fn only_the_allowed_files_open_and_only_the_writable_dir_takes_writes() {
        let data = dir("data");
        let key = data.0.join("master.key");
        std::fs::write(&key, b"secret").unwrap();
        let trust = data.0.join("trust");
        std::fs::create_dir_all(&trust).unwrap();
        std::fs::write(trust.join("ants-tsl.xml"), b"<list/>").unwrap();
        let tmp = dir("tmp");
        let policy = FsPolicy {
            readable: vec![trust.clone()],
            writable: vec![tmp.0.clone()],
        };
        let (tmp_path, trust_file) = (tmp.0.clone(), trust.join("ants-tsl.xml"));
        let (status, (secret, list, list_write, scratch, libc_read)) = restricted(policy, move || {
            (
                std::fs::read(&key).map_err(|e| e.kind()),
                std::fs::read(&trust_file).map_err(|e| e.kind()),
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&trust_file)
                    .map(|_| ())
                    .map_err(|e| e.kind()),
                std::fs::write(tmp_path.join("page.pdf"), b"%PDF").map_err(|e| e.kind()),
                std::fs::metadata("/etc/ld.so.cache").map(|_| ()).map_err(|e| e.kind()),
            )
        });
        assert_eq!(status, LandlockStatus::Full, "this test needs a kernel with Landlock v6");
        assert_eq!(secret, Err(ErrorKind::PermissionDenied));
        assert_eq!(list.as_deref(), Ok(&b"<list/>"[..]));
        assert_eq!(list_write, Err(ErrorKind::PermissionDenied));
        assert_eq!(scratch, Ok(()));
        assert_eq!(libc_read, Ok(()));
    }
}
