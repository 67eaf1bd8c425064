//! `sceau sandbox`: the child the gateway and the workers parse client files in (see
//! `common::sandbox`). Started by them, never by hand: it sets its limits, then answers page counts
//! and analyses on its stdin and stdout until the parent closes the pipe.

use crate::output;
use common::document::{self, PageCountTask};
use common::sandbox::protocol::{Request, Response};
use common::sandbox::{child, Task};
use std::process::ExitCode;
use worker::analysis::sandboxed::{AnalyseTask, ChildAnalyser};

#[derive(clap::Args)]
pub struct SandboxArgs {
    /// Address space the child may map, in MiB.
    #[arg(long, default_value_t = common::sandbox::ANALYSIS_ADDRESS_SPACE_MB)]
    address_space_mb: u64,
    /// Build the analysis engine before announcing the child ready (children that analyse).
    #[arg(long)]
    engine: bool,
    /// Run this many steps below the parent's CPU priority (nice): batch analyses.
    #[arg(long, default_value_t = 0)]
    lower_priority: u8,
}

pub fn run(args: SandboxArgs) -> ExitCode {
    common::telemetry::init();
    if let Err(error) = child::apply_limits(args.address_space_mb) {
        return output::fail(&format!("cannot limit the sandbox: {error}"));
    }
    if let Err(error) = child::lower_priority(args.lower_priority) {
        return output::fail(&format!("cannot lower the sandbox's priority: {error}"));
    }
    let mut analyser = match ChildAnalyser::new() {
        Ok(analyser) => analyser,
        Err(error) => return output::fail(&format!("cannot start the sandbox runtime: {error}")),
    };
    let ready = if args.engine { analyser.prepare() } else { Ok(()) };
    let served = child::serve(ready, |request: Request| match request.task.as_str() {
        PageCountTask::NAME => child::answer::<PageCountTask>(request, |task, files| match files.first() {
            Some(bytes) => document::page_count(task.kind, bytes),
            None => Err(document::DocumentError::Empty),
        }),
        AnalyseTask::NAME => analyser.answer(request),
        other => Response::Refused(format!("unknown task {other:?}")),
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => output::fail(&format!("sandbox pipe: {error}")),
    }
}
