//! Verification sessions: creation from a server, the additive GET, and the page behind the link.

use crate::support;

use serde_json::json;
use support::Service;

#[tokio::test]
async fn a_session_is_created_read_back_and_its_link_answers_a_page() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.admin(&["workflow", "create", "--company", &co.id, "--name", "KYC", "--category", "identite"]);
    let wf_id = wf["id"].as_str().unwrap();
    let workflows = svc.get(&co.key, "/api/v1/workflows").await.1;
    assert_eq!(workflows["data"][0]["id"], wf_id, "most recent first");

    let (s, session) = svc
        .post(
            &co.key,
            "/api/v1/verifications",
            json!({ "workflowId": wf_id, "externalRef": "dossier-42", "expiresInMinutes": 60 }),
        )
        .await;
    assert_eq!(s, 201, "{session}");
    let id = session["id"].as_str().unwrap();
    assert!(id.starts_with("VRF-"));
    assert_eq!(session["externalRef"], "dossier-42");
    assert_eq!(session["workflowId"], wf_id);
    assert_eq!(session["status"], "created");
    let url = session["verificationUrl"].as_str().unwrap();
    let token = url.rsplit('/').next().unwrap();
    assert!(url.starts_with(&format!("{}/v/", svc.base)));
    assert!(token.len() >= 22, "at least 128 random bits");

    let (s, read) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_eq!(s, 200);
    assert_eq!(read["verificationUrl"], url);
    assert_eq!(read["consultationId"], json!(null));

    let page = svc.http.get(url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(page.text().await.unwrap().contains("<html"));
    let unknown = svc.http.get(svc.url("/v/doesnotexist")).send().await.unwrap();
    assert_eq!(unknown.status(), 404);

    // Default expiry: 24 h.
    let (_, default) = svc.post(&co.key, "/api/v1/verifications", json!({ "workflowId": wf_id })).await;
    let created = chrono_like(default["createdAt"].as_str().unwrap());
    let expires = chrono_like(default["expiresAt"].as_str().unwrap());
    assert_eq!(expires - created, 1440 * 60);
    assert_eq!(default["externalRef"], json!(null));
}

/// Seconds since the epoch of an RFC 3339 timestamp.
fn chrono_like(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp()
}

/// A read-only key is for dashboards and reporting: the link it could read would let its holder
/// upload documents in the customer's name, so it never gets one.
#[tokio::test]
async fn a_read_only_key_never_receives_the_link() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.admin(&["workflow", "create", "--company", &co.id, "--name", "KYC", "--category", "identite"]);
    let (s, session) = svc.post(&co.key, "/api/v1/verifications", json!({ "workflowId": wf["id"] })).await;
    assert_eq!(s, 201, "{session}");
    let path = format!("/api/v1/verifications/{}", session["id"].as_str().unwrap());
    let rk = svc.admin(&["key", "create", "--company", &co.id, "--read-only"]);

    let (s, read) = svc.get(rk["key"].as_str().unwrap(), &path).await;
    assert_eq!(s, 200, "{read}");
    assert_eq!(read["status"], "created");
    assert_eq!(read["verificationUrl"], json!(null), "{read}");
    // The full key still gets it while the session is untouched.
    assert_eq!(svc.get(&co.key, &path).await.1["verificationUrl"], session["verificationUrl"]);
}

/// Once the customer has opened the link, the session is theirs: the API never hands the link out
/// again, to any key, so a leaked or replayed API response cannot join a journey in progress.
#[tokio::test]
async fn the_link_is_not_served_again_once_the_journey_started() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.admin(&["workflow", "create", "--company", &co.id, "--name", "KYC", "--category", "identite"]);
    let (_, session) = svc.post(&co.key, "/api/v1/verifications", json!({ "workflowId": wf["id"] })).await;
    let url = session["verificationUrl"].as_str().unwrap();
    let path = format!("/api/v1/verifications/{}", session["id"].as_str().unwrap());

    let page = svc.http.get(url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let (s, read) = svc.get(&co.key, &path).await;
    assert_eq!(s, 200, "{read}");
    assert_eq!(read["status"], "started");
    assert_eq!(read["verificationUrl"], json!(null), "{read}");
}

/// `returnUrl`: checked when the session is created, echoed as given, and offered as the way back
/// on the pages of a session that has ended, beside its short reference.
#[tokio::test]
async fn a_return_url_is_checked_echoed_and_offered_when_the_session_ends() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.admin(&["workflow", "create", "--company", &co.id, "--name", "KYC", "--category", "identite"]);
    let wf_id = wf["id"].as_str().unwrap();
    let create = |body: serde_json::Value| svc.post(&co.key, "/api/v1/verifications", body);

    let long = format!("https://banque.example/{}", "a".repeat(2048));
    for refused in [
        "http://banque.example/retour",
        "javascript:alert(1)",
        "/retour",
        "https://moi:secret@banque.example/",
        " https://banque.example/",
        long.as_str(),
    ] {
        let (s, body) = create(json!({ "workflowId": wf_id, "returnUrl": refused })).await;
        assert_eq!(
            (s, body["error"].as_str(), body["field"].as_str()),
            (400, Some("invalid_request"), Some("returnUrl")),
            "{refused}: {body}"
        );
    }
    let (s, body) = create(json!({ "workflowId": wf_id, "returnUrl": 7 })).await;
    assert_eq!(s, 400, "{body}");

    // An allow-listed host may take plain http (the test service allows 127.0.0.1).
    let (s, body) = create(json!({ "workflowId": wf_id, "returnUrl": "http://127.0.0.1:9/retour" })).await;
    assert_eq!((s, body["returnUrl"].as_str()), (201, Some("http://127.0.0.1:9/retour")), "{body}");

    let given = "https://Banque.example/espace/retour?dossier=42&étape=fin";
    let (s, session) = create(json!({ "workflowId": wf_id, "returnUrl": given })).await;
    assert_eq!(s, 201, "{session}");
    assert_eq!(session["returnUrl"], given, "exactly as given");
    let id = session["id"].as_str().unwrap();
    let (_, read) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_eq!(read["returnUrl"], given);
    let (_, without) = create(json!({ "workflowId": wf_id })).await;
    assert_eq!(without["returnUrl"], json!(null), "{without}");

    // Both sessions end (expired): the page gives the reference, and the way back only to the first.
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    db.execute("UPDATE verifications SET expires_at = '2000-01-01T00:00:00Z'", [])
        .unwrap();
    let reference = id[id.len() - 8..].to_uppercase();
    let reference = format!("{}-{}", &reference[..4], &reference[4..]);
    let page = svc.http.get(session["verificationUrl"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(page.status(), 410);
    let html = page.text().await.unwrap();
    let link = scraper_href(&html, "journey-return-link").expect("the way back");
    assert_eq!(link, given);
    assert!(
        html.contains("data-testid=\"journey-reference\"") && html.contains(&reference),
        "{html}"
    );
    let html = svc
        .http
        .get(without["verificationUrl"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(scraper_href(&html, "journey-return-link").is_none(), "{html}");
    assert!(html.contains("data-testid=\"journey-reference\""), "{html}");
}

/// The `href` of the link with `data-testid`, unescaped as a browser would read it.
fn scraper_href(html: &str, testid: &str) -> Option<String> {
    let tag_end = html.find(&format!("data-testid=\"{testid}\""))?;
    let tag_start = html[..tag_end].rfind("<a ")?;
    let tag = &html[tag_start..tag_end];
    let href = tag.split("href=\"").nth(1)?.split('"').next()?;
    Some(
        href.replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}
