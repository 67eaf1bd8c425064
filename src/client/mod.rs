//! `sceau client`: commands for integrators on their own machine, talking to a Sceau service as a
//! client does. They read no service configuration.

mod api;
mod deposit;
mod listen;
mod verify;

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ClientArgs {
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(clap::Subcommand)]
enum ClientCommand {
    /// Deposits every file of a folder as batch documents (at most 200 a batch), resumable after an
    /// interruption, then reports each file's status, verdict, decision and consultation as CSV
    /// or JSON. Reads SCEAU_API_KEY and SCEAU_URL (default http://127.0.0.1:8080). Exits 0 when
    /// every file was deposited (with --wait, and every batch ended), 1 otherwise.
    Deposit(deposit::DepositArgs),
    /// A local webhook receiver: verifies each delivery's Standard Webhooks signature, prints the
    /// event, and optionally forwards it to your own server.
    Listen(listen::ListenArgs),
    /// Creates a verification session and prints its link and a QR code to scan with a phone.
    /// Reads SCEAU_API_KEY and SCEAU_URL (default http://127.0.0.1:8080).
    Verify(verify::VerifyArgs),
}

pub async fn run(args: ClientArgs) -> ExitCode {
    match args.command {
        ClientCommand::Deposit(args) => deposit::run(args).await,
        ClientCommand::Listen(args) => listen::run(args).await,
        ClientCommand::Verify(args) => verify::run(args).await,
    }
}
