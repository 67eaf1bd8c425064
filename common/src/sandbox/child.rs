//! The child's side: set the limits, then answer requests one at a time until the parent closes
//! the pipe. Nothing here may trust a byte it reads: lengths are capped by [`super::protocol`], and
//! whatever a parser does with the files is bounded by the limits set before the first read.

use super::protocol::{self, Request, Response};
use super::Task;
use nix::sys::resource::{setrlimit, Resource};
use std::io::{self, BufReader, BufWriter};

/// Caps the child's address space (a parser's runaway allocation fails, and the child aborts) and
/// turns core dumps off (a dump would write a customer's document to disk).
pub fn apply_limits(address_space_mb: u64) -> nix::Result<()> {
    let bytes = address_space_mb.saturating_mul(1024 * 1024);
    setrlimit(Resource::RLIMIT_AS, bytes, bytes)?;
    setrlimit(Resource::RLIMIT_CORE, 0, 0)
}

/// Lowers this process's CPU priority by `steps` (nice), before any thread or program starts, so
/// that they all inherit it: a batch document's analysis yields the CPU to a journey's.
pub fn lower_priority(steps: u8) -> std::io::Result<()> {
    if steps > 0 {
        rustix::process::nice(i32::from(steps))?;
    }
    Ok(())
}

/// Announces `ready` (the child's start, done or failed), then reads requests from stdin and writes
/// each answer to stdout until stdin closes.
pub fn serve(ready: Result<(), String>, mut handle: impl FnMut(Request) -> Response) -> io::Result<()> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    let announce = match ready {
        Ok(()) => Response::Done(serde_json::Value::Null),
        Err(message) => Response::Refused(message),
    };
    protocol::write_response(&mut output, &announce)?;
    while let Some(request) = protocol::read_request(&mut input)? {
        let response = handle(request);
        protocol::write_response(&mut output, &response)?;
    }
    Ok(())
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
