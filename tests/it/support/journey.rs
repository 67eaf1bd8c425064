//! The customer journey as the page's script drives it, for the tests that need one: a workflow and
//! a session made through the CLI and the API, then the page, its CSRF token, the uploads, the
//! submit and the status polling over real HTTP.

use super::{eventually, Company, Service};
use serde_json::{json, Value};
use std::time::Duration;

/// How long a journey may take from submit to result in the tests (a loaded CI machine included).
pub const WAIT: Duration = Duration::from_secs(60);

/// A workflow of `category` (`identite` or `administratif`) whose events go to `hook`.
pub fn workflow(svc: &Service, co: &Company, category: &str, hook: Option<&str>) -> String {
    let mut args = vec![
        "workflow",
        "create",
        "--company",
        &co.id,
        "--name",
        "Parcours",
        "--category",
        category,
    ];
    if let Some(url) = hook {
        args.extend(["--webhook-url", url]);
    }
    svc.admin(&args)["id"].as_str().expect("workflow id").to_owned()
}

/// A verification session created by the client's back-end.
pub struct Session {
    pub id: String,
    /// The `verificationUrl` handed to the customer.
    pub url: String,
}

/// A new session of `workflow` carrying `external_ref`.
pub async fn session(svc: &Service, co: &Company, workflow: &str, external_ref: &str) -> Session {
    let (s, body) = svc
        .post(
            &co.key,
            "/api/v1/verifications",
            json!({ "workflowId": workflow, "externalRef": external_ref }),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    Session {
        id: body["id"].as_str().expect("session id").to_owned(),
        url: body["verificationUrl"].as_str().expect("verificationUrl").to_owned(),
    }
}

/// The page at `url` (with `Accept-Language: lang` when given): (status, HTML, the CSRF token its
/// script reads from `<meta name="csrf-token">`, if the page carries one).
pub async fn open(svc: &Service, url: &str, lang: Option<&str>) -> (u16, String, Option<String>) {
    let mut req = svc.http.get(url);
    if let Some(lang) = lang {
        req = req.header("accept-language", lang);
    }
    let r = req.send().await.expect("GET the page");
    let status = r.status().as_u16();
    let html = r.text().await.expect("the page");
    let csrf = html
        .split("<meta name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    (status, html, csrf)
}

/// Uploads `bytes` as the file of `side`, as the page does (same origin, CSRF token when given).
pub async fn upload(svc: &Service, url: &str, side: &str, csrf: Option<&str>, bytes: Vec<u8>, content_type: &str) -> (u16, Value) {
    let mut req = svc
        .http
        .post(format!("{url}/files/{side}"))
        .header("content-type", content_type)
        .header("sec-fetch-site", "same-origin")
        .body(bytes);
    if let Some(csrf) = csrf {
        req = req.header("x-csrf-token", csrf);
    }
    let r = req.send().await.expect("POST the file");
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// Sends the files for analysis, as the page's button does, the consent box left unticked.
pub async fn submit(svc: &Service, url: &str, csrf: &str) -> (u16, Value) {
    submit_answering(svc, url, csrf, false).await
}

/// [`submit`], with the customer's answer to the consent to the biometric comparison.
pub async fn submit_answering(svc: &Service, url: &str, csrf: &str, biometric_consent: bool) -> (u16, Value) {
    let query = if biometric_consent { "?biometricConsent=true" } else { "" };
    let r = svc
        .http
        .post(format!("{url}/submit{query}"))
        .header("x-csrf-token", csrf)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .expect("POST submit");
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// The session's status as the "being checked" page polls it.
pub async fn status(svc: &Service, url: &str) -> String {
    let r = svc.http.get(format!("{url}/status")).send().await.expect("GET status");
    let body: Value = r.json().await.unwrap_or(Value::Null);
    body["status"].as_str().unwrap_or("").to_owned()
}

/// How many journey files are stored for the session `id` (read from the service's database).
pub fn uploads_stored(svc: &Service, id: &str) -> i64 {
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).expect("open the database");
    db.query_row("SELECT count(*) FROM verification_uploads WHERE verification_id = ?1", [id], |r| {
        r.get(0)
    })
    .expect("count the uploads")
}

/// One journey from link to result: opens the page, uploads `files` (side, bytes, content type),
/// submits and waits until the result is recorded. Returns the session and its consultation id.
pub async fn complete(svc: &Service, co: &Company, workflow: &str, external_ref: &str, files: &[(&str, &[u8], &str)]) -> (Session, String) {
    complete_answering(svc, co, workflow, external_ref, files, false).await
}

/// [`complete`], with the customer's answer to the consent to the biometric comparison.
pub async fn complete_answering(
    svc: &Service,
    co: &Company,
    workflow: &str,
    external_ref: &str,
    files: &[(&str, &[u8], &str)],
    biometric_consent: bool,
) -> (Session, String) {
    let session = session(svc, co, workflow, external_ref).await;
    let (_, _, csrf) = open(svc, &session.url, None).await;
    let csrf = csrf.expect("the page carries a CSRF token");
    for (side, bytes, content_type) in files {
        let (s, body) = upload(svc, &session.url, side, Some(&csrf), bytes.to_vec(), content_type).await;
        assert_eq!(s, 201, "{side}: {body}");
    }
    let (s, body) = submit_answering(svc, &session.url, &csrf, biometric_consent).await;
    assert_eq!(s, 202, "{body}");
    eventually(WAIT, "the journey completes", || async {
        status(svc, &session.url).await == "completed"
    })
    .await;
    let (_, read) = svc.get(&co.key, &format!("/api/v1/verifications/{}", session.id)).await;
    let consultation = read["consultationId"]
        .as_str()
        .unwrap_or_else(|| panic!("the consultation of the journey: {read}"))
        .to_owned();
    (session, consultation)
}
