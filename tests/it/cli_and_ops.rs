//! The operator CLI (help, JSON output, clear errors, licence rule, usage) and the operational
//! endpoints, plus the OpenAPI document checked route by route against the running router.

use crate::support;

use serde_json::{json, Value};
use std::time::Duration;
use support::Service;

const COMMANDS: &[&[&str]] = &[
    &[],
    &["company"],
    &["company", "create"],
    &["company", "list"],
    &["company", "show"],
    &["company", "set"],
    &["company", "rotate-secret"],
    &["key"],
    &["key", "create"],
    &["key", "list"],
    &["key", "revoke"],
    &["workflow"],
    &["workflow", "create"],
    &["workflow", "list"],
    &["workflow", "test-webhook"],
    &["review"],
    &["review", "list"],
    &["review", "show"],
    &["review", "accept"],
    &["review", "reject"],
    &["usage"],
    &["audit"],
    &["webhook"],
    &["webhook", "list"],
    &["webhook", "dead-letters"],
    &["webhook", "replay"],
    &["trust"],
    &["trust", "import"],
    &["trust", "show"],
];

#[tokio::test]
async fn every_command_has_help_and_json() {
    let svc = Service::start(&[]).await;
    for cmd in COMMANDS {
        let mut args = cmd.to_vec();
        args.push("--help");
        let out = svc.admin_raw(&args, false);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("Usage"), "{cmd:?} --help: {text}");
        assert!(text.contains("--json") || !cmd.is_empty(), "{cmd:?}");
        let leaf_without_json = cmd.len() == 2 && !text.contains("--json");
        assert!(!leaf_without_json, "{cmd:?} has no --json");
    }
    let serve_help = std::process::Command::new(support::BIN).args(["serve", "--help"]).output().unwrap();
    assert!(serve_help.status.success());
}

#[tokio::test]
async fn keys_require_the_group_licence_and_errors_are_one_line() {
    let svc = Service::start(&[]).await;
    let standard = svc.admin(&["company", "create", "--name", "Petite SARL"]);
    assert_eq!(standard["licence"], "standard");
    let id = standard["id"].as_str().unwrap();
    let refused = svc.admin_raw(&["key", "create", "--company", id], true);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("group licence"), "{err}");
    assert!(refused.stdout.is_empty(), "no key printed");

    for args in [
        vec!["company", "show", "CMP-20260101-000000000000"],
        vec!["company", "show", "nope"],
        vec!["company", "set", id, "--retention-days", "99999"],
        vec![
            "workflow",
            "create",
            "--company",
            id,
            "--name",
            "x",
            "--category",
            "identite",
            "--rules",
            "{\"minAge\":\"old\"}",
        ],
        vec!["usage", "--company", id, "--month", "2026-13"],
        vec!["review", "accept", "CSL-20260101-000000000000"],
    ] {
        let out = svc.admin_raw(&args, false);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.trim().is_empty(), "{args:?}");
    }

    // Company creation made one default batch workflow per category.
    let co = svc.company();
    let wfs = svc.get(&co.key, "/api/v1/workflows").await.1;
    let mut categories: Vec<&str> = wfs["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["documentCategory"].as_str().unwrap())
        .collect();
    categories.sort();
    assert_eq!(categories, ["administratif", "identite"]);
    let listed = svc.admin(&["workflow", "list", "--company", &co.id]);
    assert!(listed["data"].as_array().unwrap().iter().all(|w| w["defaultBatch"] == true));
}

#[tokio::test]
async fn usage_counts_only_succeeded_documents() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    svc.deposit(&co.key, &batch, "identite", &support::png(8, 1)).await;
    svc.deposit(&co.key, &batch, "identite", &support::png(8, 2)).await;
    let mut broken = support::jpeg(16);
    broken.truncate(30);
    svc.deposit(&co.key, &batch, "identite", &broken).await;
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    svc.wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    let month = chrono::Utc::now().format("%Y-%m").to_string();
    let usage = svc.admin(&["usage", "--company", &co.id, "--month", &month]);
    assert_eq!(usage["acts"], 2, "{usage}");
    let empty = svc.admin(&["usage", "--company", &co.id, "--month", "2020-01"]);
    assert_eq!(empty["acts"], 0);
}

#[tokio::test]
async fn ops_endpoints_answer() {
    let svc = Service::start(&[]).await;
    for path in ["/healthz", "/readyz"] {
        let r = svc.http.get(svc.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers().contains_key("x-request-id"));
    }
    let (s, b) = svc.get("x", "/no/such/route").await;
    assert_eq!((s, b["error"].as_str()), (404, Some("not_found")));
}

#[tokio::test]
async fn metrics_have_their_own_listener_and_bounded_labels() {
    let svc = Service::start(&[]).await;
    let (s, b) = svc.get("", "/metrics").await;
    assert_eq!(
        (s, b["error"].as_str()),
        (404, Some("not_found")),
        "no /metrics on the public listener"
    );

    let foobar = reqwest::Method::from_bytes(b"FOOBAR").unwrap();
    let r = svc.http.request(foobar, svc.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    svc.get("", "/no/such/route/2c6a1e").await;

    assert!(svc.metrics_base.starts_with("http://127.0.0.1:"), "{}", svc.metrics_base);
    let r = svc.http.get(format!("{}/metrics", svc.metrics_base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let metrics = r.text().await.unwrap();
    assert!(metrics.contains("sceau_http_requests_total"), "{metrics}");
    assert!(metrics.contains(r#"method="other""#), "an unknown method is `other`: {metrics}");
    assert!(!metrics.contains("FOOBAR"), "{metrics}");
    assert!(metrics.contains(r#"route="unmatched""#), "{metrics}");
    assert!(!metrics.contains("2c6a1e"), "an unmatched path is not a label: {metrics}");
    assert!(metrics.contains(r#"route="/healthz""#), "{metrics}");
}

fn fill_params(path: &str) -> String {
    path.replace("{id}", "BAT-00000000-00000000")
        .replace("{side}", "recto")
        .replace("{token}", "abc")
}

#[tokio::test]
async fn openapi_document_matches_the_running_router() {
    let svc = Service::start(&[]).await;
    let (s, doc) = svc.get("", "/api/v1/openapi.json").await;
    assert_eq!(s, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    let mut operations = 0;
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            if !["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                continue;
            }
            operations += 1;
            let url = svc.url(&fill_params(path));
            let m = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = svc
                .http
                .request(m, &url)
                .header("content-type", "application/json")
                .body("{}")
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or(Value::Null);
            assert_ne!(status, 405, "{method} {path} is documented but not routed");
            let secured = op.get("security").is_some_and(|s| !s.as_array().unwrap().is_empty());
            if secured {
                assert_eq!((status, body["error"].as_str()), (401, Some("invalid_api_key")), "{method} {path}");
            } else {
                assert!(
                    body["error"] != "not_found" || path.contains("{token}"),
                    "{method} {path} is documented but not routed"
                );
            }
        }
    }
    assert_eq!(operations, 24, "every routed operation is documented");
}

#[tokio::test]
async fn ops_dead_letters_answer_in_both_modes() {
    let svc = Service::start(&[]).await;
    let listed = svc.ops(&["dead-letters", "list"]);
    for queue in ["jobs.realtime", "jobs.batch", "results", "events"] {
        assert_eq!(listed["deadLetters"][queue], 0, "{listed}");
    }
    assert_eq!(svc.ops(&["dead-letters", "replay"])["replayed"]["jobs.batch"], 0);
    for cmd in [["ops", "status"], ["ops", "drain"], ["ops", "resume"], ["ops", "dead-letters"]] {
        let out = std::process::Command::new(support::BIN).args(cmd).arg("--help").output().unwrap();
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("--json"),
            "{cmd:?}"
        );
    }
}

/// Journey and authenticity links go out to customers carrying their tokens: a public URL on
/// plain http to another host is a configuration mistake, refused before anything starts.
#[tokio::test]
async fn serve_refuses_a_plain_http_public_url() {
    let dir = support::TempDir::new("public-url");
    let child = tokio::process::Command::new(support::BIN)
        .arg("serve")
        .current_dir(&dir.0)
        .env("SCEAU_DATA_DIR", dir.0.join("data"))
        .env("SCEAU_LISTEN", "127.0.0.1:0")
        .env("SCEAU_PUBLIC_URL", "http://example.com")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // A service that starts anyway never exits: bound the wait so that failure is reported.
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("sceau serve started with a plain http public URL")
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("SCEAU_PUBLIC_URL") && err.contains("https"), "{err}");
}
