//! The portal's Developers → API keys page and its Batches pages (PORTAL.md pages 7 and 5),
//! black-box: the real binary, its CLI and API, real HTTP and headless Chromium. A key made in
//! the portal works on the API until revoked there, is shown once and never again, nor in the
//! audit log or the service's log; batches are seen by the roles that may and canceled through
//! the API's own operation by those that may cancel.

use crate::support::browser::{Browser, Screen};
use crate::support::portal::{Member, PASSWORD};
use crate::support::Service;
use serde_json::{json, Value};
use std::time::Duration;

/// The key's row on the page being shown, found by the key's prefix.
async fn row_text(b: &Browser, prefix: &str) -> String {
    let rows = b
        .client
        .find_all(fantoccini::Locator::Css("[data-testid='api-key-row']"))
        .await
        .expect("the key rows");
    for row in rows {
        let text = row.text().await.unwrap_or_default();
        if text.contains(prefix) {
            return text;
        }
    }
    panic!("no row for {prefix}: {}", b.body_text().await)
}

/// The company's audit log as the operator reads it.
fn audit(svc: &Service, company: &str) -> Value {
    svc.admin(&["audit", "--company", company])
}

fn stored_last_use(svc: &Service, prefix: &str) -> Option<String> {
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).expect("open the database");
    db.query_row("SELECT last_used_at FROM api_keys WHERE prefix = ?1", [prefix], |r| r.get(0))
        .expect("the key's row")
}

#[tokio::test]
async fn an_owner_creates_a_key_uses_it_on_the_api_and_revokes_it() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let invite = svc.admin(&[
        "user",
        "invite",
        "--company",
        &co.id,
        "--email",
        "owner@example.fr",
        "--role",
        "owner",
    ]);
    let b = Browser::start_with("portal_api_keys", svc.mode, "fr-FR", Screen::Desktop).await;
    b.client
        .goto(invite["inviteUrl"].as_str().expect("inviteUrl"))
        .await
        .expect("open the invitation");
    b.fill("input[name=password]", PASSWORD).await;
    b.fill("input[name=passwordConfirm]", PASSWORD).await;
    b.click_css("main button[type=submit]").await;
    assert_eq!(b.path().await, "/portal/");

    b.click_css("[data-testid='nav-api-keys']").await;
    assert_eq!(b.path().await, "/portal/api-keys");
    assert_eq!(b.count("[data-testid='api-key-row']").await, 1, "the key the operator made");
    let cli_row = row_text(&b, &co.key[..16]).await;
    assert!(cli_row.contains("opérateur") && cli_row.contains("jamais"), "{cli_row}");
    assert_eq!(b.count("[data-testid='api-key-secret']").await, 0);
    b.screenshot("api-keys").await;

    // A full key, shown once.
    b.click_css("[data-testid='api-key-create'] button[type=submit]").await;
    let secret = b.testid_text("api-key-secret").await;
    assert!(secret.starts_with("sk_live_") && secret.len() == 48, "{secret}");
    assert!(b.testid_text("flash-ok").await.contains("ne sera plus jamais affichée"));
    let prefix = secret[..16].to_owned();
    let row = row_text(&b, &prefix).await;
    assert!(
        row.contains("Complet") && row.contains("owner@example.fr") && row.contains("jamais"),
        "{row}"
    );
    b.screenshot("key-shown-once").await;

    let (status, body) = svc.get(&secret, "/api/v1/workflows").await;
    assert_eq!(status, 200, "{body}");

    // After a reload: the key is gone from the page, its last use is there.
    b.wait(Duration::from_secs(10), "the key's last use on the page", || async {
        b.client.goto(&svc.url("/portal/api-keys")).await.ok()?;
        (!row_text(&b, &prefix).await.contains("jamais")).then_some(())
    })
    .await;
    let source = b.client.source().await.expect("the page's source");
    assert!(!source.contains(&secret), "the key is never shown again");
    assert_eq!(b.count("[data-testid='api-key-secret']").await, 0);
    b.screenshot("last-used").await;

    // Revoked from its row (the newest first): the API refuses it.
    assert!(row_text(&b, &prefix).await.contains("Révoquer"));
    let first = b.testid_text("api-key-row").await;
    assert!(first.contains(&prefix), "the new key comes first: {first}");
    b.click_css("[data-testid='api-key-row'] [data-testid='api-key-revoke']").await;
    assert!(b.testid_text("flash-ok").await.contains("révoquée"));
    let row = row_text(&b, &prefix).await;
    assert!(row.contains("Révoquée le") && !row.contains("Révoquer"), "{row}");
    b.screenshot("revoked").await;
    let (status, body) = svc.get(&secret, "/api/v1/workflows").await;
    assert_eq!(status, 401, "{body}");

    // A read-only key: GET only.
    b.css("input[name=readOnly]").await.click().await.expect("tick read-only");
    b.screenshot("read-only-ticked").await;
    b.click_css("[data-testid='api-key-create'] button[type=submit]").await;
    let read_only = b.testid_text("api-key-secret").await;
    assert!(read_only.starts_with("rk_live_"), "{read_only}");
    assert!(row_text(&b, &read_only[..16]).await.contains("Lecture seule"));
    b.screenshot("read-only-key").await;
    assert_eq!(svc.get(&read_only, "/api/v1/workflows").await.0, 200);
    let (status, body) = svc.post(&read_only, "/api/v1/batches", json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"], "read_only_key", "{body}");

    // A test key: the page says which keys are test keys; it reads the shared workflows and none
    // of the live batches.
    b.css("input[name=test]").await.click().await.expect("tick test");
    b.click_css("[data-testid='api-key-create'] button[type=submit]").await;
    let test_key = b.testid_text("api-key-secret").await;
    assert!(test_key.starts_with("sk_test_") && test_key.len() == 48, "{test_key}");
    // The first test key comes with the test signing secret, shown this once.
    let test_secret = b.testid_text("api-key-test-secret").await;
    assert!(test_secret.starts_with("whsec_test_"), "{test_secret}");
    let row = row_text(&b, &test_key[..16]).await;
    assert!(row.contains("Test") && row.contains("Complet"), "{row}");
    assert!(row_text(&b, &read_only[..16]).await.contains("Réel"));
    b.screenshot("test-key").await;
    let (_, live_workflows) = svc.get(&read_only, "/api/v1/workflows").await;
    let (status, test_workflows) = svc.get(&test_key, "/api/v1/workflows").await;
    assert_eq!((status, &test_workflows), (200, &live_workflows), "both modes share the workflows");
    let live_batch = svc.open_batch(&co.key, None).await;
    let (_, live_batches) = svc.get(&read_only, "/api/v1/batches").await;
    assert_eq!(live_batches["data"][0]["id"], live_batch.as_str(), "{live_batches}");
    assert_eq!(svc.get(&test_key, &format!("/api/v1/batches/{live_batch}")).await.0, 404);
    let (_, test_batches) = svc.get(&test_key, "/api/v1/batches").await;
    assert_eq!(test_batches["data"], json!([]), "no live batch in test mode");
    b.close().await;

    // Named by their prefixes in the audit log; the keys themselves nowhere.
    let log = audit(&svc, &co.id);
    let text = log.to_string();
    for key in [&secret, &read_only, &test_key] {
        assert!(!text.contains(key.as_str()), "a key in the audit log: {text}");
        assert!(!svc.log().contains(key.as_str()), "a key in the service's log");
    }
    let rows: Vec<(String, String, String)> = log["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("action"), s("target"), s("actor"))
        })
        .collect();
    let owner = "owner@example.fr".to_owned();
    for expected in [
        ("api_key.create".to_owned(), prefix.clone(), owner.clone()),
        ("api_key.revoke".to_owned(), prefix.clone(), owner.clone()),
        ("api_key.create".to_owned(), read_only[..16].to_owned(), owner.clone()),
    ] {
        assert!(rows.contains(&expected), "{expected:?} in {rows:?}");
    }
}

#[tokio::test]
async fn keys_need_the_group_licence_and_a_role_that_manages_them() {
    let svc = Service::start(&[]).await;
    let co = svc.company();

    // Without the Group licence: the page says why, the form is absent and its POST refused.
    let solo = svc.admin(&["company", "create", "--name", "Solo SARL"]);
    let solo = solo["id"].as_str().expect("id").to_owned();
    let owner = Member::joined(&svc, &solo, "owner@solo.fr", "owner").await;
    let page = owner.get("/portal/api-keys").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("licence Groupe"), "{}", page.body);
    assert!(!page.body.contains("data-testid=\"api-key-create\""));
    let refused = owner.submit("/portal/api-keys", "/portal/api-keys", &[]).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(!refused.body.contains("api-key-secret") && !refused.body.contains("api-key-row"));
    assert!(audit(&svc, &solo).to_string().find("api_key.create").is_none());

    // Reviewers and viewers: refused on every route of the page, and no menu entry.
    for role in ["reviewer", "viewer"] {
        let member = Member::joined(&svc, &co.id, &format!("{role}@example.fr"), role).await;
        assert!(!member.get("/portal/").await.body.contains("nav-api-keys"), "{role}");
        assert_eq!(member.get("/portal/api-keys").await.status, 403, "{role}");
        let create = member.submit("/portal/account", "/portal/api-keys", &[("readOnly", "on")]).await;
        assert_eq!(create.status, 403, "{role}");
        let revoke = member
            .submit("/portal/account", &format!("/portal/api-keys/{}/revoke", &co.key[..16]), &[])
            .await;
        assert_eq!(revoke.status, 403, "{role}");
    }
    assert_eq!(svc.get(&co.key, "/api/v1/workflows").await.0, 200, "not revoked");

    // A developer may; another company's key is not found for them.
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let page = dev.get("/portal/api-keys").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("data-testid=\"api-key-create\""));
    let other = svc.company();
    let foreign = dev
        .submit("/portal/api-keys", &format!("/portal/api-keys/{}/revoke", &other.key[..16]), &[])
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert_eq!(svc.get(&other.key, "/api/v1/workflows").await.0, 200, "still live");

    // Its last use is written once a minute, not once per request.
    let prefix = &co.key[..16];
    // (used above already)
    crate::support::eventually(Duration::from_secs(5), "the first use recorded", || async {
        stored_last_use(&svc, prefix).is_some()
    })
    .await;
    let first = stored_last_use(&svc, prefix);
    for _ in 0..5 {
        assert_eq!(svc.get(&co.key, "/api/v1/workflows").await.0, 200);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stored_last_use(&svc, prefix), first, "within the minute, no new write");
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).expect("open the database");
    db.execute(
        "UPDATE api_keys SET last_used_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-2 minutes') WHERE prefix = ?1",
        [prefix],
    )
    .expect("age the last use");
    let aged = stored_last_use(&svc, prefix);
    assert_eq!(svc.get(&co.key, "/api/v1/workflows").await.0, 200);
    crate::support::eventually(Duration::from_secs(5), "a use recorded again after a minute", || async {
        stored_last_use(&svc, prefix) > aged
    })
    .await;
    let page = dev.get("/portal/api-keys").await;
    assert!(!page.body.contains(&co.key), "only prefixes are listed");
}

#[tokio::test]
async fn batches_are_seen_by_viewers_and_canceled_by_developers_through_the_api_operation() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (status, body) = svc.deposit(&co.key, &batch, "identite", &crate::support::png(64, 1)).await;
    assert!((200..300).contains(&status), "{status} {body}");

    // A viewer sees the batch and its document, not the cancel button, and may not cancel.
    let viewer = Member::joined(&svc, &co.id, "viewer@example.fr", "viewer").await;
    let list = viewer.get("/portal/batches").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains(&batch) && list.body.contains("lot-1") && list.body.contains("Ouvert"));
    assert_eq!(list.body.matches("data-testid=\"batch-row\"").count(), 1);
    let detail = viewer.get(&format!("/portal/batches/{batch}")).await;
    assert_eq!(detail.status, 200);
    assert_eq!(detail.body.matches("data-testid=\"batch-item-row\"").count(), 1);
    assert!(detail.body.contains("Document d’identité") && detail.body.contains("En attente"));
    assert!(!detail.body.contains("batch-cancel"), "no cancel button for a viewer");
    let refused = viewer
        .submit("/portal/batches", &format!("/portal/batches/{batch}/cancel"), &[])
        .await;
    assert_eq!(refused.status, 403);
    // A reviewer does not see batches at all.
    let reviewer = Member::joined(&svc, &co.id, "reviewer@example.fr", "reviewer").await;
    assert_eq!(reviewer.get("/portal/batches").await.status, 403);
    assert_eq!(reviewer.get(&format!("/portal/batches/{batch}")).await.status, 403);

    // Another company's member: the batch is not found, to see or to cancel.
    let other = svc.company();
    let stranger = Member::joined(&svc, &other.id, "owner@other.fr", "owner").await;
    assert!(!stranger.get("/portal/batches").await.body.contains(&batch));
    assert_eq!(stranger.get(&format!("/portal/batches/{batch}")).await.status, 404);
    let foreign = stranger
        .submit("/portal/batches", &format!("/portal/batches/{batch}/cancel"), &[])
        .await;
    assert_eq!(foreign.status, 404);
    assert_eq!(svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await.1["status"], "open");

    // A developer cancels it: the API sees it canceled, its pending document too.
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let detail = dev.get(&format!("/portal/batches/{batch}")).await;
    assert!(detail.body.contains("data-testid=\"batch-cancel\""));
    let canceled = dev
        .submit(&format!("/portal/batches/{batch}"), &format!("/portal/batches/{batch}/cancel"), &[])
        .await;
    assert_eq!(
        (canceled.status, canceled.location.as_deref()),
        (303, Some(format!("/portal/batches/{batch}?flash=canceled").as_str()))
    );
    let (_, api) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(api["status"], "canceled", "{api}");
    assert_eq!(api["items"][0]["status"], "canceled", "{api}");
    let after = dev.get(&format!("/portal/batches/{batch}?flash=canceled")).await;
    assert!(after.body.contains("data-testid=\"flash-ok\"") && after.body.contains("Annulé"));
    assert!(!after.body.contains("data-testid=\"batch-cancel\""), "nothing left to cancel");
    // Once only: the state machine refuses a second cancel, as the API does.
    let again = dev.submit("/portal/batches", &format!("/portal/batches/{batch}/cancel"), &[]).await;
    assert_eq!(
        again.location.as_deref(),
        Some(format!("/portal/batches/{batch}?flash=not_cancelable").as_str())
    );
    assert_eq!(
        svc.post(&co.key, &format!("/api/v1/batches/{batch}/cancel"), json!({})).await.0,
        409
    );

    let log = audit(&svc, &co.id);
    let cancels: Vec<&Value> = log["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|e| e["action"] == "batch.cancel")
        .collect();
    assert_eq!(cancels.len(), 1, "{log}");
    assert_eq!(
        (cancels[0]["target"].as_str(), cancels[0]["actor"].as_str()),
        (Some(batch.as_str()), Some("dev@example.fr"))
    );

    // Unknown and malformed ids are not found; a page past the last is empty.
    assert_eq!(dev.get("/portal/batches/not-a-batch").await.status, 404);
    assert_eq!(dev.get("/portal/batches?before=nonsense").await.status, 404);
    let past = dev.get(&format!("/portal/batches?before={batch}")).await;
    assert_eq!(past.status, 200);
    assert!(!past.body.contains("data-testid=\"batch-row\""));
}
