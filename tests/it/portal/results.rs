//! Results and the review queue in the portal (PORTAL.md pages 3 and 4), black-box: a reviewer
//! settles a real journey's review in Chromium (screenshots of every step under
//! `test-artifacts/browser/<mode>/portal_reviewer/`) and the receiver gets `verification.reviewed`;
//! over plain HTTP, the roles without images are refused the images, the certificate and the
//! review, another company's result is not found, and the results list filters and pages.

use crate::support::browser::{Browser, Screen};
use crate::support::journey::{self, WAIT};
use crate::support::portal::{Member, Page, PASSWORD};
use crate::support::receiver::Receiver;
use crate::support::{Company, Service};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;

/// A journey whose front photo has no machine-readable zone (`suspect`, so `a_verifier`): its
/// result waits for a review, with a recto and a selfie. Returns the result id and the images.
async fn pending_review(svc: &Service, co: &Company, workflow: &str) -> (String, Vec<u8>, Vec<u8>) {
    let (photo, selfie) = (crate::support::png(320, 7), crate::support::png(200, 8));
    let files: [(&str, &[u8], &str); 2] = [("front", &photo, "image/png"), ("selfie", &selfie, "image/png")];
    let (_, csl) = journey::complete(svc, co, workflow, "Durand-7", &files).await;
    let (s, read) = svc.get(&co.key, &format!("/api/v1/consultations/{csl}")).await;
    assert_eq!((s, read["reviewStatus"].as_str()), (200, Some("pending")), "{read}");
    (csl, photo, selfie)
}

fn audit(svc: &Service, co: &Company) -> Vec<Value> {
    svc.admin(&["audit", "--company", &co.id])["data"]
        .as_array()
        .expect("audit rows")
        .clone()
}

fn has_row(rows: &[Value], action: &str, target: &str, actor: &str) -> bool {
    rows.iter()
        .any(|e| e["action"] == action && e["target"] == target && e["actor"] == actor)
}

#[tokio::test]
async fn a_reviewer_opens_the_queue_sees_the_images_and_accepts_with_a_comment() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let wf = journey::workflow(&svc, &co, "identite", Some(&hook.url));
    let (csl, _, _) = pending_review(&svc, &co, &wf).await;
    hook.wait_for(1, WAIT).await;
    Member::joined(&svc, &co.id, "reviewer@example.fr", "reviewer").await;

    let b = Browser::start_with("portal_reviewer", svc.mode, "fr-FR", Screen::Desktop).await;
    b.client.goto(&svc.url("/portal/login")).await.expect("open the sign-in page");
    b.fill("input[name=email]", "reviewer@example.fr").await;
    b.fill("input[name=password]", PASSWORD).await;
    b.screenshot("sign-in").await;
    b.click_css("main button[type=submit]").await;
    assert_eq!(b.path().await, "/portal/", "{}", b.body_text().await);
    assert_eq!(b.count("[data-testid='nav-reviews']").await, 1);
    assert_eq!(b.count("[data-testid='nav-workflows']").await, 0, "a reviewer has no workflows");
    b.screenshot("dashboard").await;

    // The queue: one row, leading to the result.
    b.click_css("[data-testid='nav-reviews']").await;
    assert_eq!(b.path().await, "/portal/reviews");
    assert_eq!(b.count("[data-testid='review-row']").await, 1);
    assert!(b.testid_text("review-row").await.contains(&csl));
    b.screenshot("review-queue").await;
    b.click_css("[data-testid='review-row'] a").await;
    assert_eq!(b.path().await, format!("/portal/consultations/{csl}"));

    // The images, loaded through the audited route; no back was uploaded.
    for side in ["recto", "selfie"] {
        let css = format!("img[data-testid='image-{side}']");
        assert_eq!(b.count(&css).await, 1, "{side}");
        b.wait(Duration::from_secs(10), &format!("the {side} image to load"), || async {
            let width = b
                .client
                .execute(
                    "var i=document.querySelector(arguments[0]);return i&&i.complete?i.naturalWidth:0",
                    vec![json!(css)],
                )
                .await
                .ok()?;
            (width.as_u64().unwrap_or(0) > 0).then_some(())
        })
        .await;
    }
    assert_eq!(b.count("[data-testid='image-verso']").await, 0);
    assert!(b.testid_text("review-status").await.contains("En attente"));
    assert_eq!(b.count("[data-testid='certificate-download']").await, 1);
    b.screenshot("result-under-review").await;

    // Rejecting needs a comment.
    b.fill("textarea[name=comment]", "").await;
    b.click_css("main button[data-testid='review-reject']").await;
    assert!(
        b.testid_text("flash-error").await.contains("commentaire est obligatoire"),
        "{}",
        b.body_text().await
    );
    assert!(b.testid_text("review-status").await.contains("En attente"), "still pending");
    b.screenshot("reject-without-comment-refused").await;

    // Accepted with a comment: who, when and why are shown; the form is gone.
    b.fill("textarea[name=comment]", "Photo vérifiée au guichet").await;
    b.click_css("main button[data-testid='review-accept']").await;
    assert!(b.testid_text("flash-ok").await.contains("Revue enregistrée"));
    let status = b.testid_text("review-status").await;
    for expected in ["Acceptée", "reviewer@example.fr", "Photo vérifiée au guichet"] {
        assert!(status.contains(expected), "{expected} in {status}");
    }
    assert_eq!(b.count("[data-testid='review-accept']").await, 0, "settled: no more decision");
    b.screenshot("review-settled").await;

    b.click_css("[data-testid='nav-reviews']").await;
    assert_eq!(b.count("[data-testid='review-row']").await, 0);
    assert_eq!(b.count("[data-testid='no-reviews']").await, 1);
    b.screenshot("queue-empty").await;
    b.close().await;

    // The receiver got the signed event, as the CLI sends it; the verdict is unchanged.
    let got = hook.wait_for(2, WAIT).await;
    let reviewed: Vec<_> = got.iter().filter(|r| r.body["event"] == "verification.reviewed").collect();
    assert_eq!(reviewed.len(), 1, "{got:?}");
    let e = reviewed[0];
    assert!(e.signature_valid, "{e:?}");
    assert_eq!(e.body["consultationId"], csl.as_str());
    assert_eq!(e.body["workflowId"], wf.as_str());
    assert_eq!(e.body["verdict"], "suspect");
    assert_eq!(e.body["review"]["status"], "accepted");
    let (_, read) = svc.get(&co.key, &format!("/api/v1/consultations/{csl}")).await;
    assert_eq!(
        (read["verdict"].as_str(), read["reviewStatus"].as_str()),
        (Some("suspect"), Some("accepted"))
    );

    // Each image view and the decision are in the audit log, under the member's name.
    let rows = audit(&svc, &co);
    for side in ["recto", "selfie"] {
        assert!(
            has_row(&rows, "image.view", &format!("{csl}/{side}"), "reviewer@example.fr"),
            "{side}: {rows:?}"
        );
    }
    assert!(has_row(&rows, "review.settle", &csl, "reviewer@example.fr"), "{rows:?}");
}

/// Whether the page offers anything of the images or of the review.
fn shows_images_or_review(page: &Page) -> bool {
    [
        "<img",
        "name=\"comment\"",
        "review-accept",
        "review-reject",
        "/certificate",
        "/images/",
    ]
    .iter()
    .any(|needle| page.body.contains(needle))
}

#[tokio::test]
async fn images_certificate_and_decisions_are_for_their_roles_and_company_only() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = journey::workflow(&svc, &co, "identite", None);
    let (csl, photo, _) = pending_review(&svc, &co, &wf).await;
    let result = format!("/portal/consultations/{csl}");
    let (image, certificate, review) = (
        format!("{result}/images/recto"),
        format!("{result}/certificate"),
        format!("{result}/review"),
    );

    for (email, role) in [("dev@example.fr", "developer"), ("viewer@example.fr", "viewer")] {
        let m = Member::joined(&svc, &co.id, email, role).await;
        let page = m.get(&result).await;
        assert_eq!(page.status, 200, "{role}: {}", page.body);
        assert!(page.body.contains("data-testid=\"review-status\""), "{role} sees the status");
        assert!(!shows_images_or_review(&page), "{role} sees no image nor review: {}", page.body);
        assert_eq!(m.get(&image).await.status, 403, "{role}: image");
        assert_eq!(m.get(&certificate).await.status, 403, "{role}: certificate");
        assert_eq!(m.get("/portal/reviews").await.status, 403, "{role}: queue");
        let posted = m.submit(&result, &review, &[("decision", "accept"), ("comment", "vu")]).await;
        assert_eq!(posted.status, 403, "{role}: decision");
    }
    let rows = audit(&svc, &co);
    assert!(
        !rows.iter().any(|e| e["action"] == "image.view"),
        "a refused view is no view: {rows:?}"
    );

    // The reviewer gets the image as stored, shown inline and never cached, and the certificate.
    let reviewer = Member::joined(&svc, &co.id, "rev@example.fr", "reviewer").await;
    let got = reviewer.client.get(svc.url(&image)).send().await.expect("GET the image");
    assert_eq!(got.status(), 200);
    let header = |name: &str| got.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert_eq!(header("content-type"), "image/png");
    assert_eq!(header("cache-control"), "no-store");
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert_eq!(header("content-disposition"), "inline");
    assert_eq!(header("content-security-policy"), "sandbox");
    assert!(got.bytes().await.unwrap() == photo, "the image as uploaded");
    let pdf = reviewer.client.get(svc.url(&certificate)).send().await.unwrap();
    assert_eq!(pdf.status(), 200);
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF"));
    assert_eq!(reviewer.get(&format!("{result}/images/verso")).await.status, 404, "no back");
    let rows = audit(&svc, &co);
    assert!(has_row(&rows, "image.view", &format!("{csl}/recto"), "rev@example.fr"), "{rows:?}");
    assert!(has_row(&rows, "certificate.download", &csl, "rev@example.fr"), "{rows:?}");

    // Another company's reviewer: not found everywhere, and nothing settled.
    let other = svc.company();
    let stranger = Member::joined(&svc, &other.id, "rev@other.fr", "reviewer").await;
    for path in [&result, &image, &certificate] {
        assert_eq!(stranger.get(path).await.status, 404, "{path}");
    }
    let posted = stranger
        .submit("/portal/reviews", &review, &[("decision", "accept"), ("comment", "vu")])
        .await;
    assert_eq!(posted.status, 404);
    assert_eq!(
        stranger
            .get("/portal/reviews")
            .await
            .body
            .matches("data-testid=\"review-row\"")
            .count(),
        0
    );

    // The decision: refused without a comment to reject, taken once, refused after.
    let refused = reviewer
        .submit(&result, &review, &[("decision", "reject"), ("comment", "  ")])
        .await;
    assert_eq!(refused.status, 422);
    assert!(refused.body.contains("data-testid=\"flash-error\""), "{}", refused.body);
    let settled = reviewer
        .submit(&result, &review, &[("decision", "reject"), ("comment", "Photo d’un écran")])
        .await;
    assert_eq!(
        (settled.status, settled.location.as_deref()),
        (303, Some(format!("{result}?flash=reviewed").as_str()))
    );
    let page = reviewer.get(&result).await;
    assert!(
        page.body.contains("Rejetée") && page.body.contains("Photo d’un écran"),
        "{}",
        page.body
    );
    let again = reviewer.submit(&result, &review, &[("decision", "accept"), ("comment", "")]).await;
    assert_eq!(again.status, 409);
    assert!(again.body.contains("plus en attente"), "{}", again.body);
    let (_, read) = svc.get(&co.key, &format!("/api/v1/consultations/{csl}")).await;
    assert_eq!(
        (read["verdict"].as_str(), read["reviewStatus"].as_str()),
        (Some("suspect"), Some("rejected"))
    );
}

/// A processed batch of `n` identity documents (externalRef `doc-<i>`; photos of 320 pixels without a
/// machine-readable zone, so `suspect` for their low resolution) plus one administrative one (a blank
/// page, `analyse_impossible`).
async fn processed_batch(svc: &Service, key: &str, n: usize) {
    let batch = svc.open_batch(key, None).await;
    for i in 0..n {
        let body = json!({ "documentCategory": "identite", "document": crate::support::b64(&crate::support::png(320, i as u8)), "externalRef": format!("doc-{i}") });
        assert_eq!(svc.post(key, &format!("/api/v1/batches/{batch}/documents"), body).await.0, 201);
    }
    let admin = json!({ "documentCategory": "administratif", "document": crate::support::b64(&crate::support::pdf(1)), "externalRef": "admin-doc" });
    assert_eq!(svc.post(key, &format!("/api/v1/batches/{batch}/documents"), admin).await.0, 201);
    svc.post(key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    svc.wait_batch(key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
}

/// The result ids of a list page, in order.
fn ids(page: &Page) -> Vec<String> {
    page.body
        .split("data-testid=\"result-row\"")
        .skip(1)
        .map(|row| {
            let start = row.find("/portal/consultations/").expect("a link to the result") + "/portal/consultations/".len();
            row[start..].split('"').next().unwrap().to_owned()
        })
        .collect()
}

/// The link of the next page, if the page has one.
fn next_page(page: &Page) -> Option<String> {
    let at = page.body.find("data-testid=\"next-page\"")?;
    let href = page.body[..at].rfind("href=\"")? + "href=\"".len();
    let end = page.body[href..].find('"')? + href;
    Some(page.body[href..end].replace("&amp;", "&"))
}

/// Every result id from `path` on, following the next-page links; the number of pages.
async fn walk(m: &Member, path: &str) -> (Vec<String>, usize) {
    let (mut all, mut pages, mut next) = (Vec::new(), 0, Some(path.to_owned()));
    while let Some(path) = next {
        let page = m.get(&path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        all.extend(ids(&page));
        pages += 1;
        next = next_page(&page);
    }
    (all, pages)
}

#[tokio::test]
async fn the_results_list_filters_like_the_api_and_pages_with_its_cursor() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    processed_batch(&svc, &co.key, 5).await;
    let viewer = Member::joined(&svc, &co.id, "viewer@example.fr", "viewer").await;

    let page = viewer.get("/portal/consultations").await;
    assert_eq!(page.status, 200);
    assert_eq!(ids(&page).len(), 6, "{}", page.body);
    assert!(
        page.body
            .contains("href=\"/portal/consultations\" data-testid=\"nav-consultations\" aria-current=\"page\""),
        "the section is current: {}",
        page.body
    );
    assert!(page.body.contains("doc-3") && page.body.contains("admin-doc"));
    assert_eq!(next_page(&page), None, "one page");

    // The API's filters.
    let count = |query: &'static str| {
        let viewer = &viewer;
        async move {
            let page = viewer.get(&format!("/portal/consultations?{query}")).await;
            assert_eq!(page.status, 200, "{query}: {}", page.body);
            ids(&page).len()
        }
    };
    assert_eq!(count("verdict=suspect").await, 5);
    assert_eq!(count("verdict=analyse_impossible").await, 1);
    assert_eq!(count("verdict=conforme").await, 0);
    assert_eq!(count("externalRef=doc-3").await, 1);
    assert_eq!(count("externalRef=doc").await, 0, "exact, not a prefix");
    assert_eq!(count("verdict=suspect&externalRef=admin-doc").await, 0);
    assert_eq!(count("decision=refuse").await, 0, "batch results have no decision");
    let today = chrono::Utc::now().date_naive();
    let day = |d: chrono::NaiveDate| d.format("%Y-%m-%d").to_string();
    let after = |d: chrono::NaiveDate| {
        let viewer = &viewer;
        async move { ids(&viewer.get(&format!("/portal/consultations?createdAfter={}", day(d))).await).len() }
    };
    assert_eq!(after(today - chrono::Duration::days(1)).await, 6);
    assert_eq!(after(today + chrono::Duration::days(1)).await, 0);
    let batch_wf = svc.admin(&["workflow", "list", "--company", &co.id]);
    let workflows: Vec<(String, String)> = batch_wf["data"]
        .as_array()
        .or_else(|| batch_wf.as_array())
        .expect("workflows")
        .iter()
        .map(|w| {
            (
                w["id"].as_str().unwrap().to_owned(),
                w["documentCategory"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (id, category) in &workflows {
        let n = ids(&viewer.get(&format!("/portal/consultations?workflowId={id}")).await).len();
        assert_eq!(n, if category == "identite" { 5 } else { 1 }, "{id} ({category})");
        assert!(page.body.contains(&format!("<option value=\"{id}\"")), "the select offers {id}");
    }
    let bad = viewer.get("/portal/consultations?verdict=nonsense").await;
    assert_eq!(bad.status, 200);
    assert!(bad.body.contains("data-testid=\"flash-error\""), "{}", bad.body);
    assert_eq!(ids(&bad).len(), 6, "an unreadable filter is dropped");

    // Keyset pages: every result once, most recent first, filters kept from page to page.
    let (all, pages) = walk(&viewer, "/portal/consultations?limit=2").await;
    assert_eq!(pages, 3);
    assert_eq!(all, ids(&page), "the same order as the single page");
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), 6);
    let (suspect, pages) = walk(&viewer, "/portal/consultations?verdict=suspect&limit=2").await;
    assert_eq!((suspect.len(), pages), (5, 3));
    let (api_status, api) = svc.get(&co.key, "/api/v1/consultations?verdict=suspect&limit=100").await;
    assert_eq!(api_status, 200);
    let api_ids: Vec<&str> = api["data"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(suspect, api_ids, "the portal lists what the API lists");
    // A developer reads results too; the list offers no image.
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let page = dev.get("/portal/consultations").await;
    assert_eq!((page.status, page.body.contains("<img")), (200, false));
}

#[tokio::test]
async fn a_result_shows_the_face_comparison_its_score_and_the_two_faces_side_by_side() {
    let svc = Service::start(&[("SCEAU_FACE_MATCH", "true")]).await;
    let co = svc.company();
    let wf = journey::workflow(&svc, &co, "identite", None);
    let faces = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faces");
    let (card, selfie) = (
        std::fs::read(faces.join("cards/obama-obama-yaw20.jpg")).expect("card"),
        std::fs::read(faces.join("selfies/obama2.jpg")).expect("selfie"),
    );
    let files: [(&str, &[u8], &str); 2] = [("front", &card, "image/jpeg"), ("selfie", &selfie, "image/jpeg")];
    let (_, csl) = journey::complete_answering(&svc, &co, &wf, "Martin-2", &files, true).await;
    Member::joined(&svc, &co.id, "reviewer@example.fr", "reviewer").await;

    let b = Browser::start_with("portal_face_match", svc.mode, "fr-FR", Screen::Phone).await;
    b.client.goto(&svc.url("/portal/login")).await.expect("open the sign-in page");
    b.fill("input[name=email]", "reviewer@example.fr").await;
    b.fill("input[name=password]", PASSWORD).await;
    b.click_css("main button[type=submit]").await;
    b.client
        .goto(&svc.url(&format!("/portal/consultations/{csl}")))
        .await
        .expect("open the result");
    assert_eq!(b.testid_text("face-match-outcome").await, "Même personne");
    let score = b.testid_text("face-match-score").await;
    assert!(
        score.starts_with("0,") && score.contains("0,363") && score.contains("sous 0,3)"),
        "{score}"
    );
    // Both crops load their image through the audited route.
    for side in ["recto", "selfie"] {
        let css = format!("svg[data-testid='face-match-{side}'] image");
        assert_eq!(b.count(&css).await, 1, "{side}");
        let href = b.css(&css).await.attr("href").await.unwrap().unwrap_or_default();
        assert_eq!(href, format!("/portal/consultations/{csl}/images/{side}"));
    }
    b.client
        .execute("document.querySelector('[data-testid=face-match]').scrollIntoView()", vec![])
        .await
        .expect("scroll to the comparison");
    b.screenshot("face-comparison").await;
    let rows = audit(&svc, &co);
    for side in ["recto", "selfie"] {
        assert!(
            has_row(&rows, "image.view", &format!("{csl}/{side}"), "reviewer@example.fr"),
            "{side}: {rows:?}"
        );
    }
    b.close().await;
}
