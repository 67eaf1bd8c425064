//! `sceau sandbox`: the child the gateway and the workers parse client files in (see
//! `common::sandbox`). Started by them, never by hand: it isolates itself, then answers page counts
//! and analyses on its stdin and stdout until the parent closes the pipe.

use crate::output;
use common::config::Config;
use common::document::{self, PageCountTask};
use common::logo::{self, LogoTask};
use common::photo_quality::QualityTask;
use common::sandbox::escape::{self, EscapeTask};
use common::sandbox::isolation::{self, FsPolicy, Policy};
use common::sandbox::protocol::{Request, Response};
use common::sandbox::{child, Task};
use std::process::ExitCode;
use worker::analysis::quick_look;
use worker::analysis::sandboxed::{self, AnalyseTask, ChildAnalyser};

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
    // The settings its parent handed it as variables; nothing is read from the working directory.
    let config = match Config::from_environment() {
        Ok(config) => config,
        Err(error) => return refuse(&format!("cannot read the sandbox's settings: {error}")),
    };
    let fs = if args.engine {
        FsPolicy {
            readable: sandboxed::readable_paths(&config),
            writable: std::env::var_os("TMPDIR").map(Into::into).into_iter().collect(),
        }
    } else {
        FsPolicy::default()
    };
    if let Err(error) = child::lower_priority(args.lower_priority) {
        return refuse(&format!("cannot lower the sandbox's priority: {error}"));
    }
    let policy = Policy {
        address_space_mb: args.address_space_mb,
        fs,
    };
    // Before anything else is read: a child that cannot isolate itself does not serve.
    let report = match isolation::isolate(&policy) {
        Ok(report) => report,
        Err(error) => return refuse(&format!("cannot isolate the sandbox: {error}")),
    };
    let mut analyser = match ChildAnalyser::new(config) {
        Ok(analyser) => analyser,
        Err(error) => return refuse(&format!("cannot start the sandbox runtime: {error}")),
    };
    let ready = if args.engine {
        analyser.prepare().map(|()| report)
    } else {
        Ok(report)
    };
    let escape_enabled = escape::enabled();
    let served = child::serve(ready, |request: Request| match request.task.as_str() {
        PageCountTask::NAME => child::answer::<PageCountTask>(request, |task, files| match files.first() {
            Some(bytes) => document::page_count(task.kind, bytes),
            None => Err(document::DocumentError::Empty),
        }),
        LogoTask::NAME => child::answer::<LogoTask>(request, |_, files| match files.first() {
            Some(bytes) => logo::answer(bytes),
            None => Err(logo::LogoError::NotAnImage),
        }),
        QualityTask::NAME => child::answer::<QualityTask>(request, |task, files| match files.first() {
            Some(bytes) => quick_look::answer(task, bytes),
            None => Ok(Vec::new()),
        }),
        AnalyseTask::NAME => analyser.answer(request),
        EscapeTask::NAME if escape_enabled => child::answer::<EscapeTask>(request, |task, _| escape::attempt(task)),
        other => Response::Refused(format!("unknown task {other:?}")),
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => output::fail(&format!("sandbox pipe: {error}")),
    }
}

/// Tells the parent why this child will not serve (its ready frame), and exits.
fn refuse(message: &str) -> ExitCode {
    // The parent reads the reason from the frame; if the pipe is gone, stderr still has it.
    let _ = child::refuse(message);
    output::fail(message)
}
