//! `sceau client`: commands for integrators on their own machine, talking to a Sceau service as a
//! client does. They read no service configuration.

mod listen;

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ClientArgs {
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(clap::Subcommand)]
enum ClientCommand {
    /// A local webhook receiver: verifies each delivery's Standard Webhooks signature, prints the
    /// event, and optionally forwards it to your own server.
    Listen(listen::ListenArgs),
}

pub async fn run(args: ClientArgs) -> ExitCode {
    match args.command {
        ClientCommand::Listen(args) => listen::run(args).await,
    }
}
