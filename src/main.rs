//! `sceau`: the one binary. `serve` runs everything in one process (embedded mode); `admin` holds
//! the operator commands.

mod admin;
mod backends;
mod cli;
mod ops;
mod output;
mod roles;
mod sandbox;
mod serve;

use clap::Parser;

fn main() -> std::process::ExitCode {
    private_by_default();
    let cli = cli::Cli::parse();
    // The sandbox child runs one request at a time on one thread: no multi-threaded runtime.
    if let cli::Command::Sandbox(args) = cli.command {
        return sandbox::run(args);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return output::fail(&format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(cli::dispatch(cli))
}

/// Whatever this process creates (database, its logs, encrypted files, keys, and what libraries
/// create for it) is for its own user only: 0700 directories, 0600 files. Explicit modes where
/// the service creates files say the same; this covers what it does not create itself.
fn private_by_default() {
    // SAFETY: umask(2) only sets the process's file mode creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}
