//! A child isolates itself before it reads a byte of a client file: limits that bound what a
//! parser can consume (memory, files, processes, the size of a file it writes), no new privileges,
//! a system-call allow-list ([`seccomp`]), no network (a namespace of its own, and no sockets),
//! and no file but those the analysis needs ([`landlock`]).
//!
//! `no_new_privs` and the seccomp filter are mandatory: a child that cannot apply them refuses to
//! start, so no document is ever parsed unconfined. The network namespace and Landlock depend on
//! the kernel (and the namespace on the privileges the service runs with): what was enforced goes
//! back to the parent in the child's ready frame ([`IsolationReport`]), which says what is missing
//! once at start, and `sceau doctor` shows it.

pub mod landlock;
pub mod limits;
pub mod seccomp;

pub use self::landlock::{FsPolicy, LandlockStatus};
pub use limits::ProcessLimit;

use serde::{Deserialize, Serialize};

/// Why a child could not isolate itself; it refuses to serve then.
#[derive(Debug, thiserror::Error)]
pub enum IsolationError {
    #[error("cannot set the resource limits: {0}")]
    Limits(#[from] nix::Error),
    #[error("cannot set no_new_privs: {0}")]
    NoNewPrivs(std::io::Error),
    #[error(transparent)]
    Seccomp(#[from] seccomp::SeccompError),
    #[error(transparent)]
    Landlock(#[from] self::landlock::LandlockError),
}

/// How the child is kept off the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkIsolation {
    /// A network namespace of its own, with no interface up, and no sockets (seccomp).
    Namespace,
    /// The kernel or the service's privileges refused a namespace: no sockets (seccomp) only.
    SocketsRefused,
}

/// What a child enforced on itself, sent to its parent when it is ready. `no_new_privs` and the
/// seccomp filter are not in it: a child without them does not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IsolationReport {
    pub network: NetworkIsolation,
    pub landlock: LandlockStatus,
    pub process_limit: ProcessLimit,
}

/// One isolation feature, as the service and `sceau doctor` describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub enforced: bool,
    pub detail: &'static str,
}

impl IsolationReport {
    /// Every feature, mandatory ones included, with whether it holds.
    pub fn features(&self) -> Vec<Feature> {
        let (landlock, landlock_detail) = match self.landlock {
            LandlockStatus::Full => (true, "files confined to what the analysis reads"),
            LandlockStatus::Partial => (
                true,
                "files confined, but this kernel's Landlock is older: signals and TCP are not scoped by it",
            ),
            LandlockStatus::Unsupported => (
                false,
                "this kernel has no Landlock: a child could read any file the service's user can (the master key, the database)",
            ),
        };
        let (network, network_detail) = match self.network {
            NetworkIsolation::Namespace => (true, "a network namespace of its own, and no sockets"),
            NetworkIsolation::SocketsRefused => (
                false,
                "no network namespace (the kernel or the service's privileges refuse it): sockets are still refused by seccomp",
            ),
        };
        let (nproc, nproc_detail) = match self.process_limit {
            ProcessLimit::Enforced => (true, "RLIMIT_NPROC set"),
            ProcessLimit::IgnoredForRoot => (
                false,
                "RLIMIT_NPROC is set but the kernel does not enforce it for root: run the service as a user of its own",
            ),
        };
        vec![
            Feature {
                name: "no_new_privs",
                enforced: true,
                detail: "set before any file is read",
            },
            Feature {
                name: "seccomp",
                enforced: true,
                detail: "system-call allow-list, others fail with EPERM",
            },
            Feature {
                name: "landlock",
                enforced: landlock,
                detail: landlock_detail,
            },
            Feature {
                name: "network",
                enforced: network,
                detail: network_detail,
            },
            Feature {
                name: "process limit",
                enforced: nproc,
                detail: nproc_detail,
            },
        ]
    }

    /// The features this kernel or these privileges leave out.
    pub fn gaps(&self) -> Vec<Feature> {
        self.features().into_iter().filter(|f| !f.enforced).collect()
    }
}

/// What a child needs beyond the system: its address space and the paths of its analysis.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub address_space_mb: u64,
    pub fs: FsPolicy,
}

/// Isolates the calling process (which must have one thread, so that all it starts later
/// inherits it): limits, network namespace, Landlock, `no_new_privs`, seccomp, in this order
/// (each later step would forbid the system calls of the one before).
pub fn isolate(policy: &Policy) -> Result<IsolationReport, IsolationError> {
    let process_limit = limits::apply(policy.address_space_mb)?;
    let network = match nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET) {
        Ok(()) => NetworkIsolation::Namespace,
        Err(_) => NetworkIsolation::SocketsRefused,
    };
    let landlock = self::landlock::restrict(&policy.fs)?;
    no_new_privs()?;
    seccomp::install()?;
    Ok(IsolationReport {
        network,
        landlock,
        process_limit,
    })
}

/// `PR_SET_NO_NEW_PRIVS`: no program the child runs can gain privileges (set-uid, file
/// capabilities), and the seccomp filter may be installed without any.
pub fn no_new_privs() -> Result<(), IsolationError> {
    rustix::thread::set_no_new_privs(true).map_err(|e| IsolationError::NoNewPrivs(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_landlock_or_namespaces_is_reported_and_the_mandatory_parts_never_are() {
        let full = IsolationReport {
            network: NetworkIsolation::Namespace,
            landlock: LandlockStatus::Full,
            process_limit: ProcessLimit::Enforced,
        };
        assert!(full.gaps().is_empty());
        let bare = IsolationReport {
            network: NetworkIsolation::SocketsRefused,
            landlock: LandlockStatus::Unsupported,
            process_limit: ProcessLimit::IgnoredForRoot,
        };
        let gaps: Vec<&str> = bare.gaps().iter().map(|f| f.name).collect();
        assert_eq!(gaps, ["landlock", "network", "process limit"]);
        assert!(bare.features().iter().any(|f| f.name == "seccomp" && f.enforced));
    }

    #[test]
    fn the_report_travels_as_json() {
        let report = IsolationReport {
            network: NetworkIsolation::Namespace,
            landlock: LandlockStatus::Partial,
            process_limit: ProcessLimit::IgnoredForRoot,
        };
        let json = serde_json::to_value(report).unwrap();
        assert_eq!(json["landlock"], "partial");
        assert_eq!(serde_json::from_value::<IsolationReport>(json).unwrap(), report);
    }
}
