//! `sceau`: the one binary. `serve` runs everything in one process (embedded mode); `admin` holds
//! the operator commands.

mod admin;
mod backends;
mod cli;
mod client;
mod doctor;
mod ops;
mod output;
mod roles;
mod sandbox;
mod serve;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    common::private_fs::private_by_default();
    let cli = cli::Cli::parse();
    // The sandbox child runs one request at a time on one thread: no multi-threaded runtime.
    if let cli::Command::Sandbox(args) = cli.command {
        return sandbox::run(args);
    }
    // The sandbox children read their settings from the environment (the analysis engine's among them,
    // such as the data directory holding an imported trust list): the flags become variables for them,
    // set here while the process has one thread.
    for (variable, value) in cli::flags(&cli.command) {
        std::env::set_var(variable, value);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return output::fail(&format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(cli::dispatch(cli))
}
