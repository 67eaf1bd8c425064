//! Human review end to end: two real journeys whose document cannot be read complete as
//! `analyse_impossible` and wait for a review; an operator lists them, reads the findings (never
//! the image bytes), exports the document to a file, accepts one and rejects the other. Each
//! settlement emits exactly one signed `verification.reviewed` and the verdict never changes.
//! Retention never takes the images of a result still waiting for its review.

use crate::support;

use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use support::journey::{self, WAIT};
use support::portal::Member;
use support::receiver::{Received, Receiver};
use support::{Company, Service};

/// A PDF header with nothing readable behind it: accepted by sniffing, unreadable to the engine.
/// `filler` tells the two documents of the test apart.
fn unreadable_pdf(filler: u8) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    pdf.extend(std::iter::repeat_n(filler, 2000));
    pdf
}

/// One journey whose document is `pdf`, from link to result; its consultation id.
async fn journey(svc: &Service, co: &Company, workflow: &str, external_ref: &str, pdf: &[u8]) -> String {
    let files: [(&str, &[u8], &str); 1] = [("document", pdf, "application/pdf")];
    journey::complete(svc, co, workflow, external_ref, &files).await.1
}

/// `sceau admin <args> --json`, expected to fail: its one error line.
fn refused(svc: &Service, args: &[&str]) -> String {
    let out = svc.admin_raw(args, true);
    assert!(!out.status.success(), "sceau admin {args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one clear line: {stderr}");
    stderr
}

/// The `verification.reviewed` events received so far.
fn reviewed(hook: &Receiver) -> Vec<Received> {
    hook.received()
        .into_iter()
        .filter(|r| r.body["event"] == "verification.reviewed")
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn exported_file(entry: &Value) -> Vec<u8> {
    let path = entry["path"].as_str().expect("path of the exported file");
    std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn reviewers_list_read_export_and_settle_results_of_real_journeys() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let wf = journey::workflow(&svc, &co, "administratif", Some(&hook.url));
    let (first_pdf, second_pdf) = (unreadable_pdf(b'x'), unreadable_pdf(b'y'));
    let first = journey(&svc, &co, &wf, "dossier-1", &first_pdf).await;
    let second = journey(&svc, &co, &wf, "dossier-2", &second_pdf).await;
    hook.wait_for(2, WAIT).await;

    // Both wait for a review, oldest first.
    let pending = svc.admin(&["review", "list", "--company", &co.id]);
    let ids: Vec<&str> = pending["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str()], "{pending}");

    // The findings, and only the presence of the images.
    let out = svc.admin_raw(&["review", "show", &first], true);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !contains(&out.stdout, b"%PDF") && !contains(&out.stdout, &first_pdf[9..100]),
        "no image bytes printed"
    );
    let shown: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(shown["companyId"], co.id.as_str());
    assert_eq!(shown["consultation"]["id"], first.as_str());
    assert_eq!(shown["consultation"]["verdict"], "analyse_impossible");
    assert_eq!(shown["consultation"]["reviewStatus"], "pending");
    assert!(shown["consultation"]["anomalies"].is_array());
    assert_eq!(shown["images"], json!([{ "side": "recto", "purged": false }]));
    assert!(shown.get("exported").is_none());
    let text = svc.admin_raw(&["review", "show", &first], false);
    assert!(text.status.success() && !contains(&text.stdout, b"%PDF"));

    // The export writes the document exactly as uploaded, into a directory it creates.
    let dir = svc.dir.0.join("review-export").join(&first);
    let dir_arg = dir.display().to_string();
    let shown = svc.admin(&["review", "show", &first, "--export", &dir_arg]);
    let exported = shown["exported"].as_array().expect("exported");
    assert_eq!(exported.len(), 1, "{shown}");
    assert_eq!(exported[0]["side"], "recto");
    assert_eq!(exported[0]["bytes"], first_pdf.len());
    let path = exported[0]["path"].as_str().unwrap();
    assert!(path.ends_with(&format!("{first}-recto.pdf")), "{path}");
    assert!(Path::new(path).starts_with(dir.canonicalize().unwrap()), "{path}");
    assert!(exported_file(&exported[0]) == first_pdf, "the document as uploaded");
    // Never over an existing file.
    let error = refused(&svc, &["review", "show", &first, "--export", &dir_arg]);
    assert!(error.contains("already exists"), "{error}");
    assert!(exported_file(&exported[0]) == first_pdf, "the existing file is untouched");
    let audit = svc.admin(&["audit", "--company", &co.id]);
    assert!(
        audit["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "image.export" && e["target"] == format!("{first}/recto")),
        "the export is audited: {audit}"
    );

    // Accept one, reject the other: one signed event each, the verdict unchanged.
    let accepted = svc.admin(&["review", "accept", &first]);
    assert_eq!(accepted["consultation"]["reviewStatus"], "accepted");
    assert_eq!(accepted["consultation"]["verdict"], "analyse_impossible");
    let error = refused(&svc, &["review", "reject", &second]);
    assert!(error.contains("comment is required"), "{error}");
    let rejected = svc.admin(&["review", "reject", &second, "--comment", "Document illisible"]);
    assert_eq!(rejected["consultation"]["reviewStatus"], "rejected");
    assert_eq!(rejected["consultation"]["verdict"], "analyse_impossible");
    hook.wait_for(4, WAIT).await;
    let events = reviewed(&hook);
    for (id, status, event_id) in [
        (&first, "accepted", &accepted["eventId"]),
        (&second, "rejected", &rejected["eventId"]),
    ] {
        let mine: Vec<&Received> = events.iter().filter(|e| e.body["consultationId"] == id.as_str()).collect();
        assert_eq!(mine.len(), 1, "one event per settlement: {events:?}");
        let e = mine[0];
        assert!(e.signature_valid, "{e:?}");
        assert_eq!(e.id, event_id.as_str().unwrap(), "the event the command announced");
        assert_eq!(e.body["workflowId"], wf.as_str());
        assert_eq!(e.body["verdict"], "analyse_impossible");
        assert_eq!(e.body["review"]["status"], status);
        assert!(e.body["review"]["reviewedAt"].as_str().is_some_and(|t| !t.is_empty()), "{e:?}");
        let (s, read) = svc.get(&co.key, &format!("/api/v1/consultations/{id}")).await;
        assert_eq!(s, 200);
        assert_eq!(
            (read["verdict"].as_str(), read["reviewStatus"].as_str()),
            (Some("analyse_impossible"), Some(status)),
            "{read}"
        );
    }
    assert_eq!(svc.admin(&["review", "list", "--company", &co.id])["data"], json!([]));
    let audit = svc.admin(&["audit", "--company", &co.id]);
    for id in [&first, &second] {
        assert!(
            audit["data"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["action"] == "review.settle" && e["target"] == id.as_str() && e["actor"] == "operator"),
            "each settlement is audited under the operator: {audit}"
        );
    }

    // Settled is settled: a second settlement fails and emits nothing.
    let error = refused(&svc, &["review", "reject", &first, "--comment", "trop tard"]);
    assert!(error.contains("no pending review"), "{error}");
    refused(&svc, &["review", "accept", &second]);
    refused(&svc, &["review", "show", "CSL-20261122-ffffffffffff"]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(hook.received().len(), 4, "nothing more was sent");

    // Once retention purged the image, the export reports it instead of failing.
    svc.admin(&["company", "set", &co.id, "--retention-days", "0", "--yes"]);
    let image = format!("/api/v1/consultations/{second}/images/recto");
    support::eventually(WAIT, "the image is purged", || async {
        svc.get(&co.key, &image).await.1["error"] == "image_purged"
    })
    .await;
    let purged_dir = svc.dir.0.join("review-export-purged").display().to_string();
    let shown = svc.admin(&["review", "show", &second, "--export", &purged_dir]);
    assert_eq!(shown["images"], json!([{ "side": "recto", "purged": true }]));
    assert_eq!(shown["exported"], json!([{ "side": "recto", "purged": true }]));
}

/// The bytes of a consultation's image through the API, or the error code it answers.
async fn image(svc: &Service, co: &Company, id: &str) -> Result<Vec<u8>, String> {
    let r = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{id}/images/recto")))
        .bearer_auth(&co.key)
        .send()
        .await
        .expect("GET the image");
    match r.status().as_u16() {
        200 => Ok(r.bytes().await.expect("the image").to_vec()),
        _ => Err(r.json::<Value>().await.expect("an error body")["error"].to_string()),
    }
}

/// The text of the element `data-testid="{testid}"` of a page (no markup inside it).
fn testid_text(body: &str, testid: &str) -> String {
    let marker = format!("data-testid=\"{testid}\">");
    let start = body.find(&marker).unwrap_or_else(|| panic!("no {testid} in the page: {body}")) + marker.len();
    let end = body[start..].find('<').expect("the end of the element") + start;
    body[start..end].to_owned()
}

/// Evidence is never destroyed by a setting: an owner lowers the retention to 0 in the portal
/// while one result waits for its review and another is settled. The confirmation page counts the
/// settled one's image only; once confirmed, the purge takes it and keeps the waiting one's until
/// its review is settled.
#[tokio::test]
async fn lowering_the_retention_keeps_the_images_of_a_result_waiting_for_review() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = journey::workflow(&svc, &co, "administratif", None);
    let waiting_pdf = unreadable_pdf(b'w');
    let waiting = journey(&svc, &co, &wf, "en-attente", &waiting_pdf).await;
    let settled = journey(&svc, &co, &wf, "regle", &unreadable_pdf(b's')).await;
    svc.admin(&["review", "accept", &settled]);
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;

    let asked = owner
        .submit(
            "/portal/settings",
            "/portal/settings",
            &[("aiEnabled", "on"), ("retentionDays", "0")],
        )
        .await;
    assert_eq!(asked.status, 303, "{}", asked.body);
    let confirmation = asked.location.expect("the confirmation page");
    assert!(confirmation.starts_with("/portal/settings/confirm?"), "{confirmation}");
    assert_eq!(
        svc.admin(&["company", "show", &co.id])["retentionDays"],
        30,
        "nothing is saved before the confirmation"
    );
    let page = owner.get(&confirmation).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let impact = testid_text(&page.body, "confirm-impact");
    assert!(
        impact.contains("de 30 à 0 jours supprime 1 image "),
        "the settled image only: {impact}"
    );
    assert!(page.body.contains("data-testid=\"confirm\""), "{}", page.body);
    let fields = [
        ("csrf", page.field("csrf")),
        ("aiEnabled", page.field("aiEnabled")),
        ("retentionDays", page.field("retentionDays")),
        ("confirmed", page.field("confirmed")),
    ];
    let saved = owner.post("/portal/settings", &fields).await;
    assert_eq!(saved.location.as_deref(), Some("/portal/settings?flash=saved"), "{}", saved.body);
    assert_eq!(svc.admin(&["company", "show", &co.id])["retentionDays"], 0);

    support::eventually(WAIT, "the settled result's image is purged", || async {
        image(&svc, &co, &settled).await == Err("\"image_purged\"".into())
    })
    .await;
    assert!(
        image(&svc, &co, &waiting).await == Ok(waiting_pdf.clone()),
        "the image of the result waiting for review is still served"
    );
    // Retention 0 means "once settled": the review settled, its image goes too.
    svc.admin(&["review", "reject", &waiting, "--comment", "Illisible"]);
    support::eventually(WAIT, "the image is purged once its review is settled", || async {
        image(&svc, &co, &waiting).await.is_err()
    })
    .await;
}
