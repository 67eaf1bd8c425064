//! The `sceau sandbox` children of a running service, read from /proc: what tests of the sandbox
//! check from outside (their priority, their environment, that they are renewed).

use super::Service;

/// A `sceau sandbox` child of the service's processes that analyses documents.
#[derive(Debug)]
pub struct AnalysisChild {
    pub pid: u32,
    /// Started for batch documents, below the service's priority.
    pub lowered: bool,
    pub nice: i64,
    /// The names of its environment variables.
    pub variables: Vec<String>,
}

/// The analysis children alive now.
pub fn analysis_children(svc: &Service) -> Vec<AnalysisChild> {
    let parents: Vec<String> = svc.pids().into_iter().map(|(_, pid)| pid.to_string()).collect();
    let split = |bytes: &[u8]| -> Vec<String> { bytes.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect() };
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else {
            continue;
        };
        let (Ok(stat), Ok(cmdline), Ok(environ)) = (
            std::fs::read_to_string(entry.path().join("stat")),
            std::fs::read(entry.path().join("cmdline")),
            std::fs::read(entry.path().join("environ")),
        ) else {
            continue;
        };
        let args = split(&cmdline);
        if !(args.iter().any(|a| a == "sandbox") && args.iter().any(|a| a == "--engine")) {
            continue;
        }
        // After the command name in parentheses: state, ppid, … nice is the 19th field.
        let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        if fields.len() > 16 && parents.iter().any(|p| p == fields[1]) {
            children.push(AnalysisChild {
                pid,
                lowered: args.iter().any(|a| a == "--lower-priority"),
                nice: fields[16].parse().expect("nice"),
                variables: split(&environ)
                    .iter()
                    .filter_map(|v| v.split_once('=').map(|(name, _)| name.to_owned()))
                    .collect(),
            });
        }
    }
    children
}
