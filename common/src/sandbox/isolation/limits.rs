//! The resource limits of a child, inherited by the programs it runs: they bound what a hostile
//! file can make a parser (or Tesseract, or pdftoppm) consume, whatever the code does.

use nix::sys::resource::{getrlimit, setrlimit, Resource};
use serde::{Deserialize, Serialize};

/// Open files: the child's pipes, a model file or a font at a time, the page it renders. Tesseract
/// and pdftoppm open a few dozen over a run, never many at once.
pub const OPEN_FILES: u64 = 256;
/// Largest file a child writes: the copy of a PDF handed to pdftoppm (32 MiB at most, the
/// protocol's cap) and the uncompressed page pdftoppm writes back (about 27 MiB at its largest).
/// A write past it fails (pdftoppm is killed by SIGXFSZ): no document can fill the disk.
pub const FILE_SIZE_BYTES: u64 = 64 * 1024 * 1024;
/// Processes (and threads) of the service's user: counted across the whole user, so it must leave
/// room for the service's own threads; it stops a fork bomb, not the analysis.
pub const PROCESSES: u64 = 2048;

/// Whether the kernel holds the child to [`PROCESSES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessLimit {
    Enforced,
    /// Set, but a process of root (or with CAP_SYS_RESOURCE or CAP_SYS_ADMIN) is exempt from it.
    IgnoredForRoot,
}

/// Caps the address space (a parser's runaway allocation fails, and the child aborts), the open
/// files, the size of a written file and the processes, and turns core dumps off (a dump would
/// write a customer's document to disk).
pub fn apply(address_space_mb: u64) -> nix::Result<ProcessLimit> {
    cap(Resource::RLIMIT_AS, address_space_mb.saturating_mul(1024 * 1024))?;
    cap(Resource::RLIMIT_CORE, 0)?;
    cap(Resource::RLIMIT_NOFILE, OPEN_FILES)?;
    cap(Resource::RLIMIT_FSIZE, FILE_SIZE_BYTES)?;
    cap(Resource::RLIMIT_NPROC, PROCESSES)?;
    Ok(if nix::unistd::geteuid().is_root() {
        ProcessLimit::IgnoredForRoot
    } else {
        ProcessLimit::Enforced
    })
}

/// Sets both limits of `resource` to `value`, or to the hard limit the service already has when
/// that is lower (only root may raise one).
fn cap(resource: Resource, value: u64) -> nix::Result<()> {
    let (_, hard) = getrlimit(resource)?;
    let value = value.min(hard);
    setrlimit(resource, value, value)
}
