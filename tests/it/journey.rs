//! The customer journey behind `verificationUrl`, driven over real HTTP exactly as the page's
//! script drives it: read the CSRF token from the page, upload each file as a raw body, submit,
//! poll the status, then find the result through the API and the signed webhook.

use crate::support;

use serde_json::{json, Value};
use std::time::Duration;
use support::journey::{open, session, status, submit, upload, uploads_stored, workflow, Session, WAIT};
use support::receiver::Receiver;
use support::{Company, Service};

const SAMPLES: &str = "/work/shared/data/samples/identite";

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!("{SAMPLES}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Uploads the passport sample as the front, as the page does.
async fn upload_passport(svc: &Service, url: &str, csrf: &str) -> (u16, Value) {
    upload(
        svc,
        url,
        "front",
        Some(csrf),
        sample("sample-passeport-td3-valide.jpg"),
        "image/jpeg",
    )
    .await
}

async fn read(svc: &Service, co: &Company, id: &str) -> Value {
    svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await.1
}

/// An image of a consultation: (status, content type, bytes).
async fn image(svc: &Service, co: &Company, consultation: &str, side: &str) -> (u16, String, Vec<u8>) {
    let r = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{consultation}/images/{side}")))
        .bearer_auth(&co.key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let content_type = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, content_type, r.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn an_identity_journey_ends_with_a_consultation_its_decision_and_a_signed_webhook() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let wf = workflow(&svc, &co, "identite", Some(&hook.url));
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    assert_eq!(read(&svc, &co, &id).await["status"], "created");

    let (s, html, csrf) = open(&svc, &url, None).await;
    assert_eq!(s, 200);
    assert!(html.contains("<html lang=\"fr\""), "French by default");
    for id in [
        "id=\"front\"",
        "id=\"back\"",
        "id=\"selfie\"",
        "id=\"submit\"",
        "capture=\"user\"",
        "capture=\"environment\"",
    ] {
        assert!(html.contains(id), "{id} missing from the page");
    }
    assert!(!html.contains("id=\"document\""));
    let csrf = csrf.expect("the page carries a CSRF token");
    assert_eq!(
        read(&svc, &co, &id).await["status"],
        "started",
        "opening the link starts the session"
    );

    let (s, body) = upload(&svc, &url, "front", None, sample("sample-passeport-td3-valide.jpg"), "image/jpeg").await;
    assert_eq!(
        (s, body["error"].as_str()),
        (403, Some("browser_request_forbidden")),
        "no CSRF token: {body}"
    );
    let (s, body) = upload(&svc, &url, "front", Some(&csrf), b"%PDF-1.4 not an image".to_vec(), "image/jpeg").await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_document")),
        "sniffed, not trusted: {body}"
    );
    assert!(body["message"].as_str().unwrap().contains("JPEG, PNG or WebP"), "{body}");
    let (s, body) = submit(&svc, &url, &csrf).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("invalid_request")), "files missing: {body}");

    let (s, body) = upload_passport(&svc, &url, &csrf).await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["kind"], "jpeg");
    let (s, body) = upload(&svc, &url, "selfie", Some(&csrf), sample("sample-cni-td1-valide.png"), "image/png").await;
    assert_eq!(s, 201, "{body}");
    let (s, body) = submit(&svc, &url, &csrf).await;
    assert_eq!((s, &body), (202, &json!({ "status": "submitted" })));

    // Single use: no second submit, no further upload.
    let (s, body) = submit(&svc, &url, &csrf).await;
    assert_eq!((s, body["error"].as_str()), (409, Some("invalid_state")), "{body}");
    let (s, _) = upload(&svc, &url, "back", Some(&csrf), sample("sample-cni-td1-valide.png"), "image/png").await;
    assert_eq!(s, 409);

    support::eventually(WAIT, "the journey completes", || async { status(&svc, &url).await == "completed" }).await;
    let session = read(&svc, &co, &id).await;
    assert_eq!(session["status"], "completed");
    let consultation_id = session["consultationId"]
        .as_str()
        .expect("the consultation of the journey")
        .to_owned();
    let (s, consultation) = svc.get(&co.key, &format!("/api/v1/consultations/{consultation_id}")).await;
    assert_eq!(s, 200, "{consultation}");
    assert_eq!(consultation["verdict"], "conforme", "{consultation}");
    assert_eq!(consultation["decision"], "conforme", "{consultation}");
    assert_eq!(consultation["externalRef"], "dossier-7");
    assert_eq!(consultation["workflowId"], wf.as_str());

    let got = hook.wait_for(1, WAIT).await;
    let event = got
        .iter()
        .find(|r| r.body["event"] == "verification.completed")
        .expect("verification.completed");
    assert!(event.signature_valid);
    assert_eq!(event.body["consultationId"], consultation_id.as_str());
    assert_eq!(event.body["decision"], "conforme");

    // The link is spent: its page says so, without the verdict.
    let (s, html, csrf) = open(&svc, &url, None).await;
    assert_eq!(s, 200);
    assert!(html.contains("Lien déjà utilisé"), "{html}");
    assert!(!html.contains("conforme") && csrf.is_none());
    assert!(
        html.contains("data-testid=\"journey-reference\""),
        "the session's reference: {html}"
    );

    // The uploads became the consultation's images, served decrypted with the API key; the
    // uploads themselves are then released.
    let (s, content_type, bytes) = image(&svc, &co, &consultation_id, "recto").await;
    assert_eq!((s, content_type.as_str()), (200, "image/jpeg"));
    assert!(bytes == sample("sample-passeport-td3-valide.jpg"), "the front as uploaded");
    let (s, content_type, bytes) = image(&svc, &co, &consultation_id, "selfie").await;
    assert_eq!((s, content_type.as_str()), (200, "image/png"));
    assert!(bytes == sample("sample-cni-td1-valide.png"), "the selfie as uploaded");
    let (s, b) = svc
        .get(&co.key, &format!("/api/v1/consultations/{consultation_id}/images/verso"))
        .await;
    assert_eq!((s, b["error"].as_str()), (404, Some("not_found")), "no back was uploaded");
    support::eventually(WAIT, "the uploads are released", || async { uploads_stored(&svc, &id) == 0 }).await;

    // Retention purges journey images like batch images; the consultation stays.
    svc.admin(&["company", "set", &co.id, "--retention-days", "0", "--yes"]);
    for side in ["recto", "selfie"] {
        let path = format!("/api/v1/consultations/{consultation_id}/images/{side}");
        support::eventually(WAIT, "the image is purged", || async { svc.get(&co.key, &path).await.0 == 404 }).await;
        assert_eq!(svc.get(&co.key, &path).await.1["error"], "image_purged", "{side}");
    }
    assert_eq!(svc.get(&co.key, &format!("/api/v1/consultations/{consultation_id}")).await.0, 200);
}

#[tokio::test]
async fn unreadable_administrative_documents_still_complete_and_go_to_review() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let wf = workflow(&svc, &co, "administratif", Some(&hook.url));
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let (_, html, csrf) = open(&svc, &url, Some("en-GB,en;q=0.9")).await;
    assert!(html.contains("<html lang=\"en\"") && html.contains("id=\"document\""));
    assert!(!html.contains("id=\"front\""));
    // The page takes what the server takes: TIFF scans too, named in the hint and the script's list.
    assert!(
        html.contains("accept=\"application/pdf,image/tiff,image/jpeg,image/png,image/webp\""),
        "{html}"
    );
    assert!(html.contains("A one-page PDF or TIFF, or a JPEG, PNG or WebP image, 10 MB at most."));
    assert!(html.contains("\"image/tiff\""), "the script's list of types");
    let csrf = csrf.unwrap();
    // A PDF header with nothing readable behind it: accepted by sniffing, unreadable to the engine.
    let mut broken = b"%PDF-1.4\n".to_vec();
    broken.extend(std::iter::repeat_n(b'x', 2000));
    let (s, body) = upload(&svc, &url, "document", Some(&csrf), broken.clone(), "application/pdf").await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(submit(&svc, &url, &csrf).await.0, 202);
    support::eventually(WAIT, "the journey completes", || async { status(&svc, &url).await == "completed" }).await;
    let (_, session) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    let (_, consultation) = svc
        .get(
            &co.key,
            &format!("/api/v1/consultations/{}", session["consultationId"].as_str().unwrap()),
        )
        .await;
    assert_eq!(consultation["verdict"], "analyse_impossible", "{consultation}");
    assert_eq!(
        consultation["reviewStatus"], "pending",
        "an unreadable document goes to human review: {consultation}"
    );
    let event = hook.wait_for(1, WAIT).await;
    assert_eq!(event[0].body["event"], "verification.completed");
    assert_eq!(event[0].body["verdict"], "analyse_impossible");
    // The administrative document is the consultation's recto.
    let consultation_id = session["consultationId"].as_str().unwrap();
    let (s, content_type, bytes) = image(&svc, &co, consultation_id, "recto").await;
    assert_eq!((s, content_type.as_str()), (200, "application/pdf"));
    assert!(bytes == broken, "the document as uploaded");
}

#[tokio::test]
async fn unknown_expired_and_english_pages() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);

    let (s, html, _) = open(&svc, &svc.url("/v/doesnotexist"), None).await;
    assert_eq!(s, 404);
    assert!(html.contains("Lien inconnu"));
    let (s, html, _) = open(&svc, &svc.url("/v/doesnotexist"), Some("en")).await;
    assert_eq!(s, 404);
    assert!(html.contains("Unknown link") && html.contains("lang=\"en\""));
    let r = svc.http.get(svc.url("/v/doesnotexist/status")).send().await.unwrap();
    assert_eq!(r.status(), 404);

    let Session { url, .. } = session(&svc, &co, &wf, "dossier-7").await;
    let (s, html, csrf) = open(&svc, &url, Some("en")).await;
    assert_eq!(s, 200);
    assert!(html.contains("Front of the identity document") && html.contains("Send"), "{html}");
    let csrf = csrf.unwrap();
    // A request from another site is refused even with the right token.
    let r = svc
        .http
        .post(format!("{url}/submit"))
        .header("x-csrf-token", &csrf)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);

    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    db.execute("UPDATE verifications SET expires_at = '2000-01-01T00:00:00Z'", [])
        .unwrap();
    let (s, html, _) = open(&svc, &url, None).await;
    assert_eq!(s, 410);
    assert!(html.contains("Lien expiré"));
    let (s, html, _) = open(&svc, &url, Some("en")).await;
    assert_eq!(s, 410);
    assert!(html.contains("Link expired"));
    assert_eq!(status(&svc, &url).await, "expired");
    let (s, body) = upload_passport(&svc, &url, &csrf).await;
    assert_eq!((s, body["error"].as_str()), (409, Some("invalid_state")), "{body}");
}

#[tokio::test]
async fn the_uploads_of_an_expired_journey_are_deleted_after_the_retention() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let (_, _, csrf) = open(&svc, &url, None).await;
    let csrf = csrf.unwrap();
    let (s, body) = upload_passport(&svc, &url, &csrf).await;
    assert_eq!(s, 201, "{body}");
    let blob: String = rusqlite::Connection::open(svc.data_dir().join("sceau.db"))
        .unwrap()
        .query_row("SELECT blob FROM verification_uploads WHERE verification_id = ?1", [&id], |r| {
            r.get(0)
        })
        .unwrap();

    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    db.execute("UPDATE verifications SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?1", [&id])
        .unwrap();
    // Expired but within the retention (30 days by default): the file is kept.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(uploads_stored(&svc, &id), 1, "kept until the retention has passed");

    svc.admin(&["company", "set", &co.id, "--retention-days", "0", "--yes"]);
    support::eventually(WAIT, "the expired journey's upload is deleted", || async {
        uploads_stored(&svc, &id) == 0
    })
    .await;
    let blob_path = svc.blob_path(&blob);
    let blob_file_found = std::fs::metadata(&blob_path).is_ok();
    assert!(!blob_file_found, "{} still exists", blob_path.display());
}

/// Page weights (HTML with its inline CSS and JS), printed for the record. The first page carries
/// the privacy notice, a drawing per file and the link's QR code for wide screens: about 20 KB,
/// still one request and no asset to fetch on a phone.
#[tokio::test]
async fn journey_pages_stay_small() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    for category in ["identite", "administratif"] {
        let wf = workflow(&svc, &co, category, None);
        let Session { url, .. } = session(&svc, &co, &wf, "dossier-7").await;
        let (_, html, _) = open(&svc, &url, None).await;
        eprintln!("journey page ({category}): {} bytes", html.len());
        assert!(html.len() < 24_000, "{} bytes", html.len());
    }
    let (_, html, _) = open(&svc, &svc.url("/v/doesnotexist"), None).await;
    eprintln!("unknown-link page: {} bytes", html.len());
}

/// The company's name, logo and colour on every page of its journeys, and its privacy notice
/// before any upload, as set by the operator's CLI; a workflow may name its journeys otherwise,
/// and a test session shows what the company set.
#[tokio::test]
async fn the_journey_presents_the_company_and_its_privacy_notice() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let inputs = support::TempDir::new("logo");
    let logo = inputs.0.join("logo.jpg");
    let picture = image::RgbImage::from_fn(1200, 300, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 200]));
    picture.save_with_format(&logo, image::ImageFormat::Jpeg).unwrap();
    let uploaded = std::fs::read(&logo).unwrap();
    let set = svc.admin(&[
        "company",
        "set",
        &co.id,
        "--display-name",
        "Banque Exemple",
        "--logo",
        logo.to_str().unwrap(),
        "--accent",
        "#FFE600",
        "--privacy-controller",
        "Banque Exemple SA, 1 rue de la Paix, 75002 Paris",
        "--privacy-contact",
        "dpo@banque.example",
        "--privacy-policy-url",
        "https://banque.example/confidentialite?a=1&b=2",
        "--retention-days",
        "45",
    ]);
    assert_eq!(set["journey"]["hasLogo"], true, "{set}");
    let wf = workflow(&svc, &co, "identite", None);
    let Session { url, .. } = session(&svc, &co, &wf, "dossier-7").await;

    let page = svc.http.get(&url).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    let html = page.text().await.unwrap();
    assert!(html.contains("<title>Banque Exemple — vérification d'identité</title>"), "{html}");
    assert!(html.contains("data-testid=\"journey-company-name\">Banque Exemple</p>"), "{html}");
    let token = url.rsplit('/').next().unwrap();
    assert!(
        html.contains(&format!("src=\"/v/{token}/logo\" alt=\"\" data-testid=\"journey-logo\"")),
        "{html}"
    );
    assert!(html.contains(":root{--accent:#ffe600;--on-accent:#111111}"), "{html}");
    assert_eq!(
        csp.matches("'sha256-").count(),
        3,
        "the script, the stylesheet and the theme: {csp}"
    );
    let notice = &html[html.find("data-testid=\"journey-privacy\"").expect("the notice")..];
    assert!(
        html.find("data-testid=\"journey-privacy\"") < html.find("type=\"file\""),
        "before any upload"
    );
    for words in [
        "Banque Exemple SA, 1 rue de la Paix, 75002 Paris",
        "dpo@banque.example",
        "conservés 45 jours",
        "sous-traitant",
    ] {
        assert!(notice.contains(words), "{words}: {notice}");
    }
    assert!(
        notice.contains("href=\"https://banque.example/confidentialite?a=1&amp;b=2\" data-testid=\"journey-privacy-link\""),
        "{notice}"
    );

    // The logo as Sceau re-encoded it: a PNG scaled to the page, never the bytes uploaded.
    let served = svc.http.get(format!("{url}/logo")).send().await.unwrap();
    assert_eq!(served.status(), 200);
    assert_eq!(served.headers()["content-type"], "image/png");
    let served = served.bytes().await.unwrap();
    assert!(served.as_ref() != uploaded.as_slice());
    let decoded = image::load_from_memory_with_format(&served, image::ImageFormat::Png).unwrap();
    assert_eq!(
        (decoded.width(), decoded.height()),
        (576, 144),
        "{}×{}",
        decoded.width(),
        decoded.height()
    );

    // A workflow's own name wins; a test session shows the company as the live one does.
    svc.admin(&["workflow", "set-display-name", &wf, "Crédit Exemple"]);
    let test = Company {
        id: co.id.clone(),
        key: svc.admin(&["key", "create", "--company", &co.id, "--test"])["key"]
            .as_str()
            .unwrap()
            .to_owned(),
        secret: co.secret.clone(),
    };
    let Session { url, .. } = session(&svc, &test, &wf, "dossier-test").await;
    let html = svc.http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("<title>Crédit Exemple — vérification d'identité</title>"), "{html}");
    assert!(
        html.contains("data-testid=\"journey-test-mode\"") && html.contains("journey-logo"),
        "{html}"
    );
    assert_eq!(svc.http.get(format!("{url}/logo")).send().await.unwrap().status(), 200);

    // Without a logo, the page shows none and the route answers 404.
    svc.admin(&["company", "set", &co.id, "--no-logo"]);
    let html = svc.http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(!html.contains("journey-logo"), "{html}");
    assert_eq!(svc.http.get(format!("{url}/logo")).send().await.unwrap().status(), 404);
}

/// Each upload's answer carries the quick look's warnings: a blurred photo is stored and told so,
/// a sharp one draws nothing, a PDF is not looked at; none blocks the journey.
#[tokio::test]
async fn an_upload_answers_its_photo_s_warnings_and_keeps_the_file() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let (_, _, csrf) = open(&svc, &url, None).await;
    let csrf = csrf.unwrap();

    let sharp = sample("sample-passeport-td3-valide.jpg");
    let blurred = {
        let image = image::load_from_memory(&sharp).unwrap();
        let mut bytes = Vec::new();
        image
            .blur(4.0)
            .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Jpeg)
            .unwrap();
        bytes
    };
    let (s, body) = upload(&svc, &url, "front", Some(&csrf), blurred, "image/jpeg").await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["warnings"][0]["code"], "blurry", "{body}");
    assert!(
        body["warnings"][0]["message"].as_str().unwrap().contains("floue"),
        "French by default: {body}"
    );
    assert_eq!(uploads_stored(&svc, &id), 1, "a warning never refuses the file");

    let r = svc
        .http
        .post(format!("{url}/files/front"))
        .header("x-csrf-token", &csrf)
        .header("accept-language", "en")
        .body(sharp)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["warnings"], json!([]), "{body}");

    let tiny = {
        let mut bytes = Vec::new();
        image::RgbImage::from_fn(300, 200, |x, y| image::Rgb([((x * y) % 256) as u8, (x % 256) as u8, 40]))
            .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
            .unwrap();
        bytes
    };
    let r = svc
        .http
        .post(format!("{url}/files/back"))
        .header("x-csrf-token", &csrf)
        .header("accept-language", "en")
        .body(tiny)
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["warnings"][0]["code"], "low_resolution", "{body}");
    assert!(body["warnings"][0]["message"].as_str().unwrap().contains("too small"), "{body}");
}

/// With face match on, the quick look asks for a face on the selfie (the specimen's drawn
/// silhouette is none); it tells a card's front sent as its back. Neither refuses the file.
#[tokio::test]
async fn the_quick_look_asks_for_a_face_and_the_card_s_other_side() {
    let svc = Service::start(&[("SCEAU_FACE_MATCH", "true")]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-9").await;
    let (_, _, csrf) = open(&svc, &url, None).await;
    let csrf = csrf.unwrap();
    let faces = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/faces");
    let face_file = |name: &str| std::fs::read(format!("{faces}/{name}")).unwrap();

    let (s, body) = upload(&svc, &url, "selfie", Some(&csrf), sample("sample-cni-td1-valide.png"), "image/png").await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["warnings"][0]["code"], "no_face", "{body}");
    assert!(body["warnings"][0]["message"].as_str().unwrap().contains("visage"), "{body}");
    let (_, body) = upload(&svc, &url, "selfie", Some(&csrf), face_file("selfies/obama2.jpg"), "image/jpeg").await;
    assert_eq!(body["warnings"], json!([]), "{body}");
    let (_, body) = upload(&svc, &url, "selfie", Some(&csrf), face_file("selfies/two-people.jpg"), "image/jpeg").await;
    assert_eq!(body["warnings"][0]["code"], "several_faces", "{body}");

    let card_front = face_file("cards/obama-obama-flat.jpg");
    let (_, body) = upload(&svc, &url, "back", Some(&csrf), card_front.clone(), "image/jpeg").await;
    assert_eq!(body["warnings"][0]["code"], "wrong_side", "{body}");
    assert!(body["warnings"][0]["message"].as_str().unwrap().contains("recto"), "{body}");
    let (_, body) = upload(&svc, &url, "front", Some(&csrf), card_front, "image/jpeg").await;
    assert_eq!(body["warnings"], json!([]), "{body}");
    assert_eq!(uploads_stored(&svc, &id), 3, "front, back and selfie are kept, warned or not");
}

/// The plain form post (the page without its script), over HTTP.
#[tokio::test]
async fn the_form_posts_its_files_without_the_script() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let (_, _, csrf) = open(&svc, &url, None).await;
    let csrf = csrf.unwrap();
    // What Chromium sends for the page's own form post: its `Referrer-Policy: no-referrer` makes
    // the origin `null`.
    let post = |form: reqwest::multipart::Form| {
        svc.http
            .post(&url)
            .header("origin", "null")
            .header("sec-fetch-site", "same-origin")
            .multipart(form)
            .send()
    };
    let part = |bytes: Vec<u8>, name: &str| reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned());
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        post(
            reqwest::multipart::Form::new()
                .text("csrf", csrf.clone())
                .part("front", part(sample("sample-passeport-td3-valide.jpg"), "front.jpg"))
                .part("selfie", part(Vec::new(), "")),
        ),
    )
    .await
    .expect("an answer in time")
    .unwrap();
    assert_eq!(r.status(), 400, "the selfie is missing");
    let html = r.text().await.unwrap();
    assert!(html.contains("Ajoutez d’abord les fichiers obligatoires."), "{html}");
    assert_eq!(uploads_stored(&svc, &id), 1);

    let r = post(reqwest::multipart::Form::new().text("csrf", "wrong".to_owned()))
        .await
        .unwrap();
    assert_eq!(r.status(), 403);

    let r = post(
        reqwest::multipart::Form::new()
            .text("csrf", csrf.clone())
            .part("selfie", part(sample("sample-cni-td1-valide.png"), "selfie.png")),
    )
    .await
    .unwrap();
    // 303 to the page, which the client followed: "being checked".
    assert_eq!(r.url().as_str(), url.as_str());
    assert!(r.text().await.unwrap().contains("Vérification en cours"));
    assert_ne!(status(&svc, &url).await, "started", "submitted");
}
