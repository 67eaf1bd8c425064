//! `sceau doctor`: checks an installation before it serves, and prints a readable report: the optional
//! programs (what their absence costs and how to install them), the data directory's permissions, the
//! trust list's age, the isolation of the sandbox children on this kernel, and RabbitMQ and Redis
//! when they are configured. Exits 1 when a check fails; a missing optional program, an old trust
//! list or an isolation feature this kernel lacks is a warning (a child that cannot be confined at
//! all does not start: that is a failure).

use crate::backends::redact;
use crate::output;
use chrono::Utc;
use common::blobs::BlobStore;
use common::capabilities::Capabilities;
use common::config::Config;
use common::queue::amqp::{AmqpOptions, AmqpQueue};
use common::redis::{RedisBackend, RedisConfig};
use common::sandbox::{Sandbox, SandboxCommand, PAGE_COUNT_ADDRESS_SPACE_MB};
use serde::Serialize;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use worker::analysis::EngineOptions;

/// How long a broker or Redis gets to answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A trust list older than this gets a warning even before its next update is due: ANTS publishes
/// several a year.
const TRUST_LIST_OLD_DAYS: i64 = 365;

#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok  ",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

#[derive(Debug, Serialize)]
struct Check {
    name: String,
    status: Status,
    detail: String,
}

impl Check {
    fn new(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Self {
        Check {
            name: name.into(),
            status,
            detail: detail.into(),
        }
    }
}

pub async fn run(config: Config, args: DoctorArgs) -> ExitCode {
    let mut checks = Vec::new();
    match worker::analysis::capabilities::probe(&EngineOptions::from_config(&config)) {
        Ok(capabilities) => {
            checks.extend(program_checks(&capabilities));
            checks.push(trust_list_check(&capabilities));
        }
        Err(e) => checks.push(Check::new("trust list", Status::Fail, e.to_string())),
    }
    checks.extend(data_dir_checks(&config.data_dir, &config.master_key_path()));
    checks.extend(sandbox_checks().await);
    checks.push(blob_store_check(&config).await);
    checks.extend(service_checks(&config).await);
    let worst = checks.iter().map(|c| c.status).max().unwrap_or(Status::Ok);
    if args.json {
        output::print(true, &serde_json::json!({ "status": worst, "checks": checks }));
    } else {
        println!("sceau doctor ({})", env!("CARGO_PKG_VERSION"));
        for check in &checks {
            println!("{} {:<16} {}", check.status.label(), check.name, check.detail);
        }
        println!("{}", summary(&checks));
    }
    if worst == Status::Fail {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn summary(checks: &[Check]) -> String {
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    format!(
        "{} ok, {} warning(s), {} failure(s)",
        count(Status::Ok),
        count(Status::Warn),
        count(Status::Fail)
    )
}

fn program_checks(capabilities: &Capabilities) -> Vec<Check> {
    capabilities
        .programs
        .iter()
        .map(|p| match p.missing_line() {
            None => Check::new(p.program.name(), Status::Ok, p.detail.clone()),
            Some(line) => Check::new(p.program.name(), Status::Warn, line),
        })
        .collect()
}

fn trust_list_check(capabilities: &Capabilities) -> Check {
    let list = &capabilities.trust_list;
    let now = Utc::now();
    let age = (now - list.issued).num_days();
    let next = list.next_update.map_or("-".to_string(), |d| d.format("%Y-%m-%d").to_string());
    let detail = format!(
        "{:?} list, sequence {}, issued {} ({age} days ago), next update {next}",
        list.origin,
        list.sequence,
        list.issued.format("%Y-%m-%d")
    )
    .to_lowercase();
    if let Some(warning) = list.expiry_warning(now) {
        return Check::new("trust list", Status::Warn, warning);
    }
    let status = if age > TRUST_LIST_OLD_DAYS { Status::Warn } else { Status::Ok };
    Check::new("trust list", status, detail)
}

/// The data directory must exist (or be creatable), be the service user's alone and writable; the master
/// key, when there, must be private.
fn data_dir_checks(dir: &Path, master_key: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let name = "data directory";
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let creatable = std::fs::metadata(parent).is_ok_and(|m| m.is_dir());
            let status = if creatable { Status::Warn } else { Status::Fail };
            checks.push(Check::new(
                name,
                status,
                format!("{} does not exist yet (created at first start)", dir.display()),
            ));
            return checks;
        }
        Err(e) => {
            checks.push(Check::new(name, Status::Fail, format!("{}: {e}", dir.display())));
            return checks;
        }
    };
    let mode = meta.permissions().mode() & 0o777;
    let problem = if !meta.is_dir() {
        Some("is not a directory".to_string())
    } else if mode & 0o077 != 0 {
        Some(format!("mode {mode:04o} lets group or others in; chmod 700 it"))
    } else {
        match writable(dir) {
            Err(e) => Some(format!("not writable: {e}")),
            Ok(uid) if uid != meta.uid() => Some(format!("belongs to uid {}, not to this user (uid {uid})", meta.uid())),
            Ok(_) => None,
        }
    };
    checks.push(match problem {
        Some(p) => Check::new(name, Status::Fail, format!("{} {p}", dir.display())),
        None => Check::new(name, Status::Ok, format!("{} (mode {mode:04o}, writable)", dir.display())),
    });
    match common::private_fs::shared_access(master_key) {
        Ok(Some(why)) => checks.push(Check::new("master key", Status::Fail, format!("{} {why}", master_key.display()))),
        Ok(None) => checks.push(Check::new("master key", Status::Ok, format!("{} (private)", master_key.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            checks.push(Check::new("master key", Status::Ok, "not created yet (created at first start)"))
        }
        Err(e) => checks.push(Check::new("master key", Status::Fail, format!("{}: {e}", master_key.display()))),
    }
    checks
}

/// Creates and removes a file in `dir`; its owner is this process's user.
fn writable(dir: &Path) -> std::io::Result<u32> {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let uid = common::private_fs::file_options().open(&probe)?.metadata()?.uid();
    std::fs::remove_file(&probe)?;
    Ok(uid)
}

/// Starts one sandbox child as the service would and reports each isolation feature it enforced.
async fn sandbox_checks() -> Vec<Check> {
    let command = match SandboxCommand::current_exe(PAGE_COUNT_ADDRESS_SPACE_MB) {
        Ok(command) => command,
        Err(e) => return vec![Check::new("sandbox", Status::Fail, format!("cannot find the sceau binary: {e}"))],
    };
    match Sandbox::new(command, 1).isolation().await {
        Ok(report) => report
            .features()
            .into_iter()
            .map(|feature| {
                let status = if feature.enforced { Status::Ok } else { Status::Warn };
                Check::new(format!("sandbox {}", feature.name), status, feature.detail)
            })
            .collect(),
        Err(e) => vec![Check::new(
            "sandbox",
            Status::Fail,
            format!("no sandbox child can start, so no client file can be parsed: {e}"),
        )],
    }
}

/// Where documents and images are kept (`SCEAU_BLOB_URL`): a bucket must answer in time.
async fn blob_store_check(config: &Config) -> Check {
    let checked = tokio::time::timeout(CONNECT_TIMEOUT, BlobStore::check_location(&config.blob_location())).await;
    match checked {
        Ok(Ok(detail)) => Check::new("blob store", Status::Ok, detail),
        Ok(Err(e)) => Check::new("blob store", Status::Fail, e.to_string()),
        Err(_) => Check::new("blob store", Status::Fail, format!("no answer within {CONNECT_TIMEOUT:?}")),
    }
}

/// RabbitMQ and Redis, when configured (distributed mode).
async fn service_checks(config: &Config) -> Vec<Check> {
    let mut checks = Vec::new();
    match &config.amqp_url {
        None => checks.push(Check::new("rabbitmq", Status::Ok, "not configured (embedded mode)")),
        Some(url) => {
            let connected = tokio::time::timeout(CONNECT_TIMEOUT, AmqpQueue::connect(url, AmqpOptions::default())).await;
            checks.push(match connected {
                Ok(Ok(amqp)) => {
                    amqp.close().await;
                    Check::new("rabbitmq", Status::Ok, format!("{} reachable", redact(url)))
                }
                Ok(Err(e)) => Check::new("rabbitmq", Status::Fail, format!("{}: {e}", redact(url))),
                Err(_) => Check::new(
                    "rabbitmq",
                    Status::Fail,
                    format!("{}: no answer within {CONNECT_TIMEOUT:?}", redact(url)),
                ),
            });
        }
    }
    match &config.redis_url {
        None => checks.push(Check::new("redis", Status::Ok, "not configured (embedded mode)")),
        Some(url) => {
            let ping = async {
                let redis = RedisBackend::new(&RedisConfig {
                    url: url.clone(),
                    prefix: config.redis_prefix.clone(),
                })
                .map_err(|e| e.to_string())?;
                redis.ping().await.map_err(|e| e.to_string())
            };
            checks.push(match tokio::time::timeout(CONNECT_TIMEOUT, ping).await {
                Ok(Ok(())) => Check::new("redis", Status::Ok, format!("{} answers", redact(url))),
                Ok(Err(e)) => Check::new("redis", Status::Fail, format!("{}: {e}", redact(url))),
                Err(_) => Check::new(
                    "redis",
                    Status::Fail,
                    format!("{}: no answer within {CONNECT_TIMEOUT:?}", redact(url)),
                ),
            });
        }
    }
    checks
}
