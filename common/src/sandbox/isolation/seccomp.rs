//! The child's system-call allow-list. A parser bug that hands control to a hostile file gets a
//! process that can compute, read what Landlock lets it read, and run OCR and rendering, but not
//! open a network socket, trace or mount anything, load a module or change its namespaces.
//!
//! The list was taken from `strace -f -c` of the child and of the programs it runs (Tesseract,
//! pdftoppm) over the engine's tests, then widened by the neighbours of each call (a `*at` variant,
//! the 64-bit twin) so that another libc or poppler version does not fall off it.
//!
//! Anything else fails with `EPERM` rather than killing the process: an optional call of a system
//! program (a probe for a newer interface, a cache it tries to write) then degrades that program
//! instead of crashing it in the middle of a customer's document, and the refusal cannot be used
//! for anything either way. `clone3` answers `ENOSYS`, the one answer glibc takes as "use `clone`",
//! whose flags (unlike `clone3`'s, passed in memory) the filter can read: no new namespace.

use seccompiler::{BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch};
use std::collections::BTreeMap;

/// Why no filter could be built or installed.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    #[error("seccomp is not supported on this architecture ({0})")]
    Architecture(&'static str),
    #[error("the seccomp filter cannot be built: {0}")]
    Build(String),
    #[error("the seccomp filter cannot be installed: {0}")]
    Install(String),
}

/// Calls allowed whatever their arguments.
const ALLOWED: &[libc::c_long] = &[
    // Files, through the descriptors Landlock allowed.
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_preadv2,
    libc::SYS_pwritev2,
    libc::SYS_open,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_close,
    libc::SYS_close_range,
    libc::SYS_lseek,
    libc::SYS_stat,
    libc::SYS_fstat,
    libc::SYS_lstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_access,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_readlink,
    libc::SYS_readlinkat,
    libc::SYS_getdents64,
    libc::SYS_getcwd,
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_fcntl,
    libc::SYS_ioctl,
    libc::SYS_dup,
    libc::SYS_dup2,
    libc::SYS_dup3,
    libc::SYS_pipe,
    libc::SYS_pipe2,
    // On the local socket pairs the child creates (the async runtime's signal pipe, the OCR
    // timer's wake-up pipe): without `socket`, there is no other socket to send on.
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_sendmsg,
    libc::SYS_recvmsg,
    libc::SYS_shutdown,
    libc::SYS_ftruncate,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_fadvise64,
    libc::SYS_flock,
    libc::SYS_copy_file_range,
    libc::SYS_sendfile,
    libc::SYS_umask,
    // The private temporary directory (pdftoppm's input and output), and fontconfig's cache,
    // which Landlock then refuses.
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_unlink,
    libc::SYS_unlinkat,
    libc::SYS_rmdir,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_link,
    libc::SYS_linkat,
    libc::SYS_fchmod,
    libc::SYS_chmod,
    libc::SYS_fchmodat,
    libc::SYS_utimensat,
    // Memory.
    libc::SYS_brk,
    libc::SYS_mmap,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_mprotect,
    libc::SYS_madvise,
    libc::SYS_mlock,
    libc::SYS_munlock,
    libc::SYS_membarrier,
    // Threads, signals, time.
    libc::SYS_futex,
    libc::SYS_set_robust_list,
    libc::SYS_get_robust_list,
    libc::SYS_set_tid_address,
    libc::SYS_rseq,
    libc::SYS_arch_prctl,
    libc::SYS_sched_yield,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_setaffinity,
    libc::SYS_sched_getparam,
    libc::SYS_sched_getscheduler,
    libc::SYS_sched_get_priority_max,
    libc::SYS_sched_get_priority_min,
    libc::SYS_getpriority,
    libc::SYS_setpriority,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_rt_sigsuspend,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_restart_syscall,
    libc::SYS_sigaltstack,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_gettimeofday,
    libc::SYS_time,
    libc::SYS_getitimer,
    libc::SYS_setitimer,
    libc::SYS_timer_create,
    libc::SYS_timer_settime,
    libc::SYS_timer_gettime,
    libc::SYS_timer_delete,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_select,
    libc::SYS_pselect6,
    libc::SYS_epoll_create,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_eventfd,
    libc::SYS_eventfd2,
    libc::SYS_timerfd_create,
    libc::SYS_timerfd_settime,
    libc::SYS_timerfd_gettime,
    // Processes: the OCR and rendering programs it starts, and their reaping (killing: see
    // `kill` below).
    libc::SYS_execve,
    libc::SYS_vfork,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_gettid,
    libc::SYS_getpgrp,
    libc::SYS_getpgid,
    libc::SYS_getsid,
    libc::SYS_getuid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getegid,
    libc::SYS_getresuid,
    libc::SYS_getresgid,
    libc::SYS_getgroups,
    libc::SYS_getrusage,
    libc::SYS_getrlimit,
    libc::SYS_prlimit64,
    libc::SYS_times,
    libc::SYS_uname,
    libc::SYS_sysinfo,
    libc::SYS_getrandom,
    libc::SYS_getcpu,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
];

/// `prctl` options a program may use on itself: thread names, the death signal, reading its state.
const PRCTL_OPTIONS: &[libc::c_int] = &[
    libc::PR_SET_NAME,
    libc::PR_GET_NAME,
    libc::PR_SET_PDEATHSIG,
    libc::PR_GET_PDEATHSIG,
    libc::PR_GET_DUMPABLE,
    libc::PR_SET_VMA,
    libc::PR_GET_NO_NEW_PRIVS,
    libc::PR_GET_SECCOMP,
    libc::PR_CAPBSET_READ,
];

/// Flags of `clone` that would put the new process in a namespace of its own.
const NAMESPACE_FLAGS: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWCGROUP) as u64;

/// The architecture of this build, as the filter checks it (a 32-bit call on a 64-bit kernel is
/// refused by that check).
fn architecture() -> Result<TargetArch, SeccompError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| SeccompError::Architecture(std::env::consts::ARCH))
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SeccompError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| SeccompError::Build(e.to_string()))
}

/// Argument `arg` names one process: a pid above 0.
fn one_process(arg: u8) -> Result<Vec<SeccompCondition>, SeccompError> {
    Ok(vec![
        condition(arg, SeccompCmpOp::Gt, 0)?,
        condition(arg, SeccompCmpOp::Le, i32::MAX as u64)?,
    ])
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SeccompError> {
    SeccompRule::new(conditions).map_err(|e| SeccompError::Build(e.to_string()))
}

/// The allow-list: the calls above, `clone` without namespace flags, `prctl` on oneself, `kill`
/// of one process (never a group nor every process; Landlock's signal scope, where the kernel has
/// it, narrows that to the child's own programs), `socketpair` of local sockets only (the async
/// runtime's signal pipe), and no `socket` at all: nothing the analysis does needs one.
fn rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = ALLOWED.iter().map(|&call| (call, Vec::new())).collect();
    rules.insert(
        libc::SYS_clone,
        vec![rule(vec![condition(0, SeccompCmpOp::MaskedEq(NAMESPACE_FLAGS), 0)?])?],
    );
    rules.insert(
        libc::SYS_prctl,
        PRCTL_OPTIONS
            .iter()
            .map(|&option| rule(vec![condition(0, SeccompCmpOp::Eq, option as u64)?]))
            .collect::<Result<_, _>>()?,
    );
    // A child kills the programs it started by their pid, and signals its own threads. The pid is
    // compared as an unsigned word: above 0 and at most i32::MAX keeps out 0 (its group) and the
    // negative ones (-1: every process it may signal; -pgid: a group).
    for call in [libc::SYS_kill, libc::SYS_tgkill, libc::SYS_tkill] {
        rules.insert(call, vec![rule(one_process(0)?)?]);
    }
    rules.insert(
        libc::SYS_socketpair,
        vec![rule(vec![condition(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?])?],
    );
    Ok(rules)
}

/// The filters the child installs, in order: the one that sends `clone3` back to `clone`, then
/// the allow-list (which lets `clone3` through to the first). Of two filters' answers the kernel
/// keeps the more restrictive, so `clone3` gets `ENOSYS` and any call off the list `EPERM`. The
/// allow-list comes last because installing a filter takes `prctl` and `seccomp`, which it denies.
pub fn filters() -> Result<Vec<BpfProgram>, SeccompError> {
    let arch = architecture()?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| SeccompError::Build(e.to_string()))?;
    let mut rules = rules()?;
    rules.insert(libc::SYS_clone3, Vec::new());
    let allow_list = SeccompFilter::new(rules, SeccompAction::Errno(libc::EPERM as u32), SeccompAction::Allow, arch)
        .map_err(|e| SeccompError::Build(e.to_string()))?;
    [clone3, allow_list]
        .into_iter()
        .map(|filter| BpfProgram::try_from(filter).map_err(|e| SeccompError::Build(e.to_string())))
        .collect()
}

/// Installs the filters on the calling thread, which every thread and program it starts
/// afterwards inherits. `no_new_privs` must be set first (seccompiler sets it too).
pub fn install() -> Result<(), SeccompError> {
    for program in filters()? {
        seccompiler::apply_filter(&program).map_err(|e| SeccompError::Install(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter holds on the thread that installed it (and its children), so each test installs
    /// it on a thread of its own and leaves the test harness unfiltered.
    fn filtered<T: Send + 'static>(check: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(move || {
            super::super::no_new_privs().expect("no_new_privs");
            install().expect("the filter installs");
            check()
        })
        .join()
        .expect("the filtered thread")
    }

    fn errno<T>(result: std::io::Result<T>) -> Option<i32> {
        result.err().and_then(|e| e.raw_os_error())
    }

    #[test]
    fn the_filters_compile_for_this_architecture() {
        let programs = filters().unwrap();
        assert_eq!(programs.len(), 2);
        assert!(programs.iter().all(|p| !p.is_empty()));
    }

    #[test]
    fn the_allow_list_has_no_network_socket_nor_escape_hatch() {
        let rules = rules().unwrap();
        for forbidden in [
            libc::SYS_socket,
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_ptrace,
            libc::SYS_mount,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_bpf,
            libc::SYS_process_vm_readv,
            libc::SYS_init_module,
            libc::SYS_io_uring_setup,
            libc::SYS_clone3,
        ] {
            assert!(!rules.contains_key(&forbidden), "syscall {forbidden} is allowed");
        }
    }

    #[test]
    fn sockets_and_namespaces_are_refused_with_eperm_and_ordinary_calls_go_through() {
        let (inet, inet6, unix, unshare, read, every_process, itself) = filtered(|| {
            use nix::sys::signal::kill;
            use nix::unistd::Pid;
            (
                errno(std::net::TcpListener::bind("127.0.0.1:0")),
                errno(std::net::UdpSocket::bind("[::1]:0")),
                errno(std::os::unix::net::UnixDatagram::unbound()),
                errno(nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(std::io::Error::from)),
                std::fs::read_to_string("/proc/thread-self/status").ok(),
                // Signal 0 only checks: the group -1 (every process) is refused, one pid is not.
                kill(Pid::from_raw(-1), None).err(),
                kill(Pid::this(), None).err(),
            )
        });
        assert_eq!((every_process, itself), (Some(nix::errno::Errno::EPERM), None));
        assert_eq!(inet, Some(libc::EPERM));
        assert_eq!(inet6, Some(libc::EPERM));
        assert_eq!(unix, Some(libc::EPERM));
        assert_eq!(unshare, Some(libc::EPERM));
        let status = read.expect("the thread reads its own status");
        assert!(status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2"), "{status}");
    }

    /// Threads and programs still start under the filter (glibc falls back from clone3 to clone).
    #[test]
    fn threads_and_programs_start_under_the_filter() {
        let (thread, program) = filtered(|| {
            let thread = std::thread::spawn(|| 7).join().ok();
            let program = std::process::Command::new("true").status().map(|s| s.success()).ok();
            (thread, program)
        });
        assert_eq!((thread, program), (Some(7), Some(true)));
    }
}
