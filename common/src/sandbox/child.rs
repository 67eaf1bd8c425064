//! The child's side: isolate itself, then answer requests one at a time until the parent closes
//! the pipe. Nothing here may trust a byte it reads: lengths are capped by [`super::protocol`], and
//! whatever a parser does with the files is bounded by the isolation set before the first read
//! ([`super::isolation`]).

use super::isolation::IsolationReport;
use super::protocol::{self, Request, Response};
use super::Task;
use std::io::{self, BufReader, BufWriter};

/// Lowers this process's CPU priority by `steps` (nice), before any thread or program starts, so
/// that they all inherit it: a batch document's analysis yields the CPU to a journey's.
pub fn lower_priority(steps: u8) -> std::io::Result<()> {
    if steps > 0 {
        rustix::process::nice(i32::from(steps))?;
    }
    Ok(())
}

/// Announces `ready` (the child's start, done with the isolation it enforces, or failed), then
/// reads requests from stdin and writes each answer to stdout until stdin closes.
pub fn serve(ready: Result<IsolationReport, String>, mut handle: impl FnMut(Request) -> Response) -> io::Result<()> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    let announce = match ready.and_then(|report| serde_json::to_value(report).map_err(|e| e.to_string())) {
        Ok(report) => Response::Done(report),
        Err(message) => Response::Refused(message),
    };
    protocol::write_response(&mut output, &announce)?;
    while let Some(request) = protocol::read_request(&mut input)? {
        let response = handle(request);
        protocol::write_response(&mut output, &response)?;
    }
    Ok(())
}

/// Announces that this child will not serve, with why; the caller exits next.
pub fn refuse(message: &str) -> io::Result<()> {
    protocol::write_response(&mut io::stdout().lock(), &Response::Refused(message.to_owned()))
}

/// Decodes the task of `request` and answers with what `run` makes of it.
pub fn answer<T: Task>(request: Request, run: impl FnOnce(T, Vec<Vec<u8>>) -> T::Output) -> Response {
    let task: T = match serde_json::from_value(request.body) {
        Ok(task) => task,
        Err(error) => return Response::Refused(format!("malformed {} task: {error}", T::NAME)),
    };
    match serde_json::to_value(run(task, request.files)) {
        Ok(value) => Response::Done(value),
        Err(error) => Response::Refused(format!("cannot encode the {} answer: {error}", T::NAME)),
    }
}
