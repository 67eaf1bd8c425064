//! The start of a role's sandbox pool: one child is started at once, so what isolation this kernel
//! or these privileges leave out is said when the service starts (by `common::sandbox`, once per
//! process) rather than at the first document, and a sandbox that cannot start at all is an error
//! in the log before any client waits on it. With the test-only escape hook set, that child is then
//! asked to try leaving the sandbox, and each outcome is logged for the black-box tests.

use common::config::Config;
use common::sandbox::escape::{self, EscapeTask};
use common::sandbox::Sandbox;
use std::time::Duration;
use tokio::task::JoinSet;

/// Longest the escape attempts may take; they are a few system calls.
const ESCAPE_DEADLINE: Duration = Duration::from_secs(10);

/// Starts a first child of `pool` in the background (see the module's documentation).
pub fn start(pool: Sandbox, config: &Config, role: &'static str, tasks: &mut JoinSet<()>) {
    // Only files this role has: a distributed worker keeps no database.
    let kept: Vec<_> = [
        ("master key".to_owned(), config.master_key_path()),
        ("database".to_owned(), config.database_path()),
    ]
    .into_iter()
    .filter(|(_, path)| path.exists())
    .collect();
    tasks.spawn(async move {
        if let Err(error) = pool.isolation().await {
            tracing::error!(role, %error, "no sandbox child could start: client files cannot be parsed");
            return;
        }
        if escape::enabled() {
            attempt_escape(&pool, role, kept).await;
        }
    });
}

/// Test-only: the child tries to open `files` and sockets; every outcome is logged.
async fn attempt_escape(pool: &Sandbox, role: &'static str, files: Vec<(String, std::path::PathBuf)>) {
    match pool.run(&EscapeTask { files }, &[], ESCAPE_DEADLINE).await {
        Ok(attempts) => {
            for attempt in attempts {
                tracing::warn!(role, what = attempt.what, outcome = attempt.outcome, "sandbox escape attempt");
            }
        }
        Err(error) => tracing::error!(role, %error, "the sandbox escape attempts could not run"),
    }
}
