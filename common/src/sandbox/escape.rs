//! Test-only: a task that tries to leave the sandbox (open files the service keeps, such as the
//! master key and the database, and open network sockets) and reports how each attempt ended.
//! A child accepts it only when the service was started with
//! [`ESCAPE_HOOK`](super::environment::ESCAPE_HOOK) in its environment, which no client can set;
//! the service then runs it once per pool at start and logs the outcomes, which the black-box
//! tests read. It never reads what it opens.

use super::Task;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The files to try; the sockets are always tried.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EscapeTask {
    pub files: Vec<(String, PathBuf)>,
}

/// One attempt: what was tried and how it ended (`opened`, or the error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub what: String,
    pub outcome: String,
}

impl Task for EscapeTask {
    const NAME: &'static str = "test_escape";
    type Output = Vec<Attempt>;
}

/// Whether this process may run the task: only with the hook in its environment.
pub fn enabled() -> bool {
    std::env::var_os(super::environment::ESCAPE_HOOK).is_some()
}

/// The child's side: each attempt, in order.
pub fn attempt(task: EscapeTask) -> Vec<Attempt> {
    let outcome = |result: std::io::Result<()>| match result {
        Ok(()) => "opened".to_owned(),
        Err(error) => error.to_string(),
    };
    let mut attempts: Vec<Attempt> = task
        .files
        .into_iter()
        .map(|(what, path)| Attempt {
            what,
            outcome: outcome(std::fs::File::open(&path).map(drop)),
        })
        .collect();
    attempts.push(Attempt {
        what: "tcp socket".to_owned(),
        outcome: outcome(std::net::TcpListener::bind("127.0.0.1:0").map(drop)),
    });
    attempts.push(Attempt {
        what: "udp6 socket".to_owned(),
        outcome: outcome(std::net::UdpSocket::bind("[::1]:0").map(drop)),
    });
    attempts
}
