//! The contract is good enough for client generators: a Python client generated from the served
//! OpenAPI document by openapi-python-client (PyPI) runs the quick start against the real binary.
//! The generator lives in a venv in the target directory, made once (it needs PyPI the first time).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::Service;

/// The generator's version: a new one is a deliberate change.
const GENERATOR: &str = "openapi-python-client==0.29.1";

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{command:?} failed:\n{stdout}\n{stderr}");
    format!("{stdout}{stderr}")
}

/// The venv with the generator, made if missing.
fn generator() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let venv = target.join("python-client-venv");
    let program = venv.join("bin/openapi-python-client");
    let version = GENERATOR.rsplit("==").next().unwrap();
    let installed = Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(version));
    if !installed {
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
        run(Command::new(venv.join("bin/pip")).args(["install", "-q", "--disable-pip-version-check", GENERATOR]));
    }
    venv
}

#[tokio::test]
async fn a_generated_python_client_runs_the_quick_start() {
    let venv = generator();
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let document = svc
        .http
        .get(svc.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let work = support::TempDir::new("python-client");
    std::fs::write(work.0.join("openapi.json"), document).unwrap();
    let generated = run(Command::new(venv.join("bin/openapi-python-client")).current_dir(&work.0).args([
        "generate",
        "--path",
        "openapi.json",
        "--meta",
        "none",
        "--output-path",
        "sceau_client_generated",
    ]));
    // Every schema of the document generates; what the generator cannot type are the binary
    // bodies (images, certificate, journey uploads), which it hands over raw.
    assert!(!generated.contains("Unable to"), "{generated}");
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python_client/quickstart.py");
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let printed = run(Command::new(venv.join("bin/python"))
        .current_dir(&work.0)
        .arg(quickstart)
        .arg(&svc.base)
        .arg(&co.key)
        .arg(scripts));
    let rows: Vec<&str> = printed.lines().filter(|l| l.starts_with("doc-")).collect();
    assert_eq!(rows.len(), 2, "{printed}");
    assert!(rows.iter().all(|r| r.split(' ').nth(1) == Some("succeeded")), "{printed}");
    assert!(rows.iter().all(|r| r.contains(" CSL-")), "{printed}");
}
