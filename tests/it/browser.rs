//! The customer journey in a real browser (headless Chromium over WebDriver): tests/it/journey.rs
//! drives the journey's endpoints the way the page's script should, this one runs the script
//! itself, as a customer would meet it on a phone: the language chosen from the browser's, file
//! inputs, uploads with the CSRF token and their progress, client-side type checks, submit, the
//! "being checked" state (also when the customer comes back to the link meanwhile) and the
//! thank-you page, which must not reveal the verdict. The result is then checked through the API
//! and the signed webhook. Screenshots of each step are kept under
//! `test-artifacts/browser/<mode>/<test>/`.

use crate::support;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use serde_json::{json, Value};
use std::path::Path;
use support::browser::{Browser, Screen};
use support::journey::{session, uploads_stored, workflow, Session, WAIT};
use support::receiver::Receiver;
use support::{Service, TempDir};

const SAMPLES: &str = "/work/shared/data/samples/identite";

/// Waits until the page says the file of `side` was received (or fails at once on its error).
async fn wait_uploaded(b: &Browser, side: &str, received: &str) {
    let msg = format!("{side}-msg");
    b.wait(WAIT, &format!("the {side} upload"), || async {
        let text = b.text(&msg).await;
        let class = b.classes(&msg).await;
        assert!(!class.contains("err"), "the {side} upload failed on the page: {text}");
        let progress = b.prop(&format!("{side}-progress"), "value").await;
        (text == received && class.contains("ok") && progress == json!(100)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_customer_sends_an_identity_document_from_a_phone_browser() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let wf = workflow(&svc, &co, "identite", Some(&hook.url));
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let b = Browser::start("identity_journey", svc.mode, "fr-FR").await;

    // The page, in the browser's language (French).
    b.client.goto(&url).await.expect("open the journey");
    assert_eq!(b.client.title().await.unwrap(), "Test SA — vérification d'identité");
    assert_eq!(b.text_of_css("[data-testid=journey-company-name]").await, "Test SA");
    assert_eq!(b.text("journey-title").await, "Vérification d’identité");
    let html = b.client.find(fantoccini::Locator::Css("html")).await.unwrap();
    assert_eq!(html.attr("lang").await.unwrap().as_deref(), Some("fr"));
    for side in ["front", "back", "selfie"] {
        assert_eq!(b.prop(side, "type").await, "file", "#{side}");
    }
    assert!(!b.displayed("checking").await && !b.displayed("done").await);
    assert_eq!(b.prop("submit", "disabled").await, true, "nothing to send yet");
    b.screenshot("page").await;
    let (_, session) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_eq!(session["status"], "started", "opening the link starts the session");

    // Each file is uploaded as soon as it is chosen; no back: it is optional.
    b.choose_file("front", &Path::new(SAMPLES).join("sample-passeport-td3-valide.jpg"))
        .await;
    wait_uploaded(&b, "front", "Fichier reçu.").await;
    b.choose_file("selfie", &Path::new(SAMPLES).join("sample-cni-td1-valide.png")).await;
    wait_uploaded(&b, "selfie", "Fichier reçu.").await;
    assert!(
        b.displayed("front-preview").await && b.displayed("selfie-preview").await,
        "previews shown"
    );
    assert_eq!(b.text("back-msg").await, "");
    assert_eq!(uploads_stored(&svc, &id), 2, "both files stored");
    assert_eq!(b.prop("submit", "disabled").await, false, "ready to send");
    b.screenshot("uploaded").await;

    // Submit: "being checked", then the thank-you page.
    b.click("submit").await;
    b.wait(WAIT, "the checking section", || async {
        b.displayed("checking").await.then_some(())
    })
    .await;
    assert!(!b.displayed("journey").await, "the form is gone");
    assert_eq!(b.text("checking-title").await, "Vérification en cours");
    b.screenshot("checking").await;
    b.wait(WAIT, "the thank-you section", || async { b.displayed("done").await.then_some(()) })
        .await;
    assert!(!b.displayed("checking").await && !b.displayed("journey").await);
    assert_eq!(b.text("done-title").await, "Merci");
    b.screenshot("done").await;
    let shown = b.body_text().await.to_lowercase();
    let source = b.client.source().await.unwrap().to_lowercase();
    for verdict in ["conforme", "suspect", "fraud", "analyse_impossible"] {
        assert!(
            !shown.contains(verdict) && !source.contains(verdict),
            "the thank-you page reveals the verdict ({verdict}): {shown}"
        );
    }

    // The result, for the client only: through the API and the signed webhook.
    let (_, session) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_eq!(session["status"], "completed", "{session}");
    let consultation_id = session["consultationId"]
        .as_str()
        .unwrap_or_else(|| panic!("the consultation of the journey: {session}"))
        .to_owned();
    let (s, consultation) = svc.get(&co.key, &format!("/api/v1/consultations/{consultation_id}")).await;
    assert_eq!(s, 200, "{consultation}");
    assert!(consultation["verdict"].as_str().is_some_and(|v| !v.is_empty()), "{consultation}");
    assert_eq!(consultation["workflowId"], wf.as_str());
    support::eventually(WAIT, "the verification.completed webhook", || async {
        hook.received().iter().any(|r| r.body["event"] == "verification.completed")
    })
    .await;
    let got = hook.received();
    let event = got.iter().find(|r| r.body["event"] == "verification.completed").unwrap();
    assert!(event.signature_valid, "{event:?}");
    assert_eq!(event.body["consultationId"], consultation_id.as_str());
    assert_eq!(event.body["verdict"], consultation["verdict"]);

    // Coming back to the link: spent, still without the verdict.
    b.client.refresh().await.unwrap();
    b.wait(WAIT, "the used-link page", || async {
        b.body_text().await.contains("Lien déjà utilisé").then_some(())
    })
    .await;
    assert!(!b.body_text().await.to_lowercase().contains("conforme"));
    b.screenshot("link-used").await;
    b.close().await;
}

/// One identity journey in the browser with the test set's card and `selfie`, the consent box
/// ticked or not; returns the consultation as the API gives it.
async fn face_journey(svc: &Service, co: &support::Company, wf: &str, b: &Browser, selfie: &str, consent: bool) -> Value {
    let faces = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faces");
    let Session { id, url } = session(svc, co, wf, "dossier-faces").await;
    b.client.goto(&url).await.expect("open the journey");
    let consent_box = b
        .css("input[type=checkbox][name=biometricConsent][data-testid=journey-biometric-consent]")
        .await;
    assert_eq!(
        consent_box.prop("checked").await.unwrap().as_deref(),
        Some("false"),
        "unticked until the customer ticks it"
    );
    b.choose_file("front", &faces.join("cards/obama-obama-yaw20.jpg")).await;
    wait_uploaded(b, "front", "Fichier reçu.").await;
    if consent {
        consent_box.click().await.expect("tick the consent");
        assert_eq!(consent_box.prop("checked").await.unwrap().as_deref(), Some("true"));
        b.screenshot("consent-ticked").await;
    }
    b.choose_file("selfie", &faces.join(selfie)).await;
    wait_uploaded(b, "selfie", "Fichier reçu.").await;
    b.click("submit").await;
    b.wait(WAIT, "the thank-you section", || async { b.displayed("done").await.then_some(()) })
        .await;
    let (_, session) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    let consultation = session["consultationId"].as_str().unwrap_or_else(|| panic!("{session}")).to_owned();
    svc.get(&co.key, &format!("/api/v1/consultations/{consultation}")).await.1
}

#[tokio::test]
async fn the_customer_is_asked_before_the_selfie_and_only_a_consenting_selfie_is_compared() {
    let svc = Service::start(&[("SCEAU_FACE_MATCH", "true")]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let b = Browser::start("biometric_consent", svc.mode, "fr-FR").await;
    let code_of = |c: &Value, code: &str| {
        c["anomalies"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["code"] == code).cloned())
    };

    let compared = face_journey(&svc, &co, &wf, &b, "selfies/obama2.jpg", true).await;
    assert!(code_of(&compared, "liveness_not_checked").is_some(), "{compared}");
    assert!(
        code_of(&compared, "selfie_not_checked").is_none() && code_of(&compared, "selfie_mismatch").is_none(),
        "{compared}"
    );

    let kept_for_a_person = face_journey(&svc, &co, &wf, &b, "selfies/obama2.jpg", false).await;
    let not_checked = code_of(&kept_for_a_person, "selfie_not_checked").unwrap_or_else(|| panic!("{kept_for_a_person}"));
    assert!(
        not_checked["message"].as_str().unwrap().contains("did not consent"),
        "{not_checked}"
    );
    assert_eq!(kept_for_a_person["decision"], "a_verifier", "{kept_for_a_person}");
    b.close().await;
}

#[tokio::test]
async fn a_wrong_file_type_is_refused_on_the_page_and_nothing_is_uploaded() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "administratif", None);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let b = Browser::start("wrong_file_type", svc.mode, "en-GB").await;

    b.client.goto(&url).await.expect("open the journey");
    assert_eq!(
        b.text("journey-title").await,
        "Document verification",
        "English for an English browser"
    );
    assert_eq!(b.prop("document", "type").await, "file");
    assert!(b.client.find(fantoccini::Locator::Id("front")).await.is_err(), "no identity inputs");
    b.screenshot("page").await;

    // A text file: refused by the script, before any request.
    let dir = TempDir::new("browser");
    let notes = dir.0.join("notes.txt");
    std::fs::write(&notes, "not a document\n").unwrap();
    b.choose_file("document", &notes).await;
    let refused = "This file type is not accepted. Choose a one-page PDF or TIFF, or a JPEG, PNG or WebP image.";
    b.wait(WAIT, "the type error", || async {
        (b.text("document-msg").await == refused).then_some(())
    })
    .await;
    assert!(b.classes("document-msg").await.contains("err"));
    assert_eq!(b.prop("document", "value").await, "", "the choice is cleared");
    assert!(!b.displayed("document-progress").await && !b.displayed("document-preview").await);
    assert_eq!(b.prop("submit", "disabled").await, true);
    assert_eq!(b.requests_to("/files/").await, 0, "no upload was even tried");
    assert_eq!(uploads_stored(&svc, &id), 0, "nothing uploaded");
    b.screenshot("wrong-type").await;

    // A text file named like a photo gets past the script; the server sniffs it and refuses it,
    // and the page says so the same way.
    b.client.refresh().await.unwrap();
    assert_eq!(b.text("document-msg").await, "");
    b.choose_file("document", &Path::new(SAMPLES).join("bad-texte-renomme.jpg")).await;
    b.wait(WAIT, "the server's refusal", || async {
        (b.text("document-msg").await == refused).then_some(())
    })
    .await;
    assert!(b.classes("document-msg").await.contains("err"));
    assert!(!b.displayed("document-progress").await);
    assert_eq!(b.prop("submit", "disabled").await, true);
    assert_eq!(b.requests_to("/files/document").await, 1, "this one was sent");
    assert_eq!(uploads_stored(&svc, &id), 0, "nothing stored");
    b.screenshot("refused-by-server").await;
    let (_, session): (u16, Value) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_eq!(session["status"], "started", "{session}");
    b.close().await;
}

/// Sets a session's status in the database, to hold it where the test needs the page.
fn set_status(svc: &Service, id: &str, status: &str) {
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    let n = db
        .execute("UPDATE verifications SET status = ?2 WHERE id = ?1", [id, status])
        .unwrap();
    assert_eq!(n, 1);
}

#[tokio::test]
async fn a_customer_who_comes_back_while_the_documents_are_checked_gets_the_thank_you_page() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-7").await;
    let b = Browser::start("back_while_checking", svc.mode, "fr-FR").await;
    b.client.goto(&url).await.expect("open the journey");
    b.choose_file("front", &Path::new(SAMPLES).join("sample-passeport-td3-valide.jpg"))
        .await;
    wait_uploaded(&b, "front", "Fichier reçu.").await;
    b.choose_file("selfie", &Path::new(SAMPLES).join("sample-cni-td1-valide.png")).await;
    wait_uploaded(&b, "selfie", "Fichier reçu.").await;
    b.click("submit").await;
    b.wait(WAIT, "the thank-you section", || async { b.displayed("done").await.then_some(()) })
        .await;

    // The analysis cannot be held in every mode: the session is put back in "submitted" instead,
    // as if its analysis still ran when the customer reloads the page or opens the link again.
    set_status(&svc, &id, "submitted");
    b.client.goto(&url).await.unwrap();
    b.wait(WAIT, "the checking page", || async { b.displayed("checking").await.then_some(()) })
        .await;
    assert_eq!(b.client.title().await.unwrap(), "Test SA — vérification d'identité");
    b.screenshot("checking-page").await;
    set_status(&svc, &id, "completed");
    b.wait(WAIT, "the thank-you section after the checking page", || async {
        b.displayed("done").await.then_some(())
    })
    .await;
    assert!(!b.displayed("checking").await);
    b.screenshot("done").await;
    b.close().await;
}

/// Presses `key` on the keyboard (wherever the focus is), and returns the id of the element
/// focused afterwards.
async fn press(b: &Browser, key: Key) -> String {
    let key = char::from(key);
    let keyboard = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    b.client.perform_actions(keyboard).await.expect("press a key");
    let now = b.client.active_element().await.expect("the focused element");
    now.attr("id").await.expect("its id").unwrap_or_default()
}

/// Text colours against their backgrounds (WCAG 2 contrast ratio) of every visible text element
/// of the page: `[selector, ratio]` for those under 4.5:1.
const LOW_CONTRAST: &str = r#"
function rgb(s){var m=s.match(/[\d.]+/g)||[];return m.map(Number)}
function lum(c){var a=c.slice(0,3).map(function(v){v/=255;return v<=0.03928?v/12.92:Math.pow((v+0.055)/1.055,2.4)});
  return 0.2126*a[0]+0.7152*a[1]+0.0722*a[2]}
function bg(e){for(;e;e=e.parentElement){var c=rgb(getComputedStyle(e).backgroundColor);if(c.length===3||c[3]>0)return c}return [255,255,255]}
var low=[];
document.querySelectorAll('h1,p,label,button,a,li,span').forEach(function(e){
  if(!e.offsetParent||!e.textContent.trim())return;
  var f=lum(rgb(getComputedStyle(e).color)),g=lum(bg(e)),r=(Math.max(f,g)+0.05)/(Math.min(f,g)+0.05);
  if(r<4.5)low.push([e.tagName+'#'+e.id+'.'+e.className,Math.round(r*100)/100])});
return low"#;

#[tokio::test]
async fn the_page_is_named_readable_and_usable_with_a_keyboard() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let Session { url, .. } = session(&svc, &co, &wf, "dossier-7").await;
    let b = Browser::start("keyboard_and_contrast", svc.mode, "fr-FR").await;
    b.client.goto(&url).await.expect("open the journey");

    // Every file input has a label a screen reader announces.
    let unnamed = b
        .client
        .execute(
            "return [].slice.call(document.querySelectorAll('input:not([type=hidden])')).filter(function(i){\
             var l=document.querySelector('label[for=\"'+i.id+'\"]');return !l||!l.textContent.trim()}).map(function(i){return i.id})",
            vec![],
        )
        .await
        .expect("labels");
    assert_eq!(unnamed, json!([]), "inputs without a label");
    let low = b.client.execute(LOW_CONTRAST, vec![]).await.expect("contrast");
    assert_eq!(low, json!([]), "text under 4.5:1 against its background");

    // Tab walks the steps in order, the consent just before the selfie; the send button waits
    // for the required files.
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(press(&b, Key::Tab).await);
    }
    assert_eq!(order, ["front", "back", "biometricConsent", "selfie"], "tab order");
    assert_eq!(b.prop("submit", "disabled").await, true);
    b.choose_file("front", &Path::new(SAMPLES).join("sample-passeport-td3-valide.jpg"))
        .await;
    wait_uploaded(&b, "front", "Fichier reçu.").await;
    b.choose_file("selfie", &Path::new(SAMPLES).join("sample-cni-td1-valide.png")).await;
    wait_uploaded(&b, "selfie", "Fichier reçu.").await;
    let low = b.client.execute(LOW_CONTRAST, vec![]).await.expect("contrast");
    assert_eq!(low, json!([]), "text under 4.5:1 once the files are received");
    b.screenshot("files-received").await;

    // From the last step, Tab reaches the button and Enter sends; the focus follows to the heading
    // of the "being checked" section, so a screen reader announces it.
    b.client
        .execute("document.getElementById('selfie').focus()", vec![])
        .await
        .expect("focus the last step");
    assert_eq!(press(&b, Key::Tab).await, "submit");
    let focused = press(&b, Key::Enter).await;
    b.wait(WAIT, "the checking or thank-you section", || async {
        (b.displayed("checking").await || b.displayed("done").await).then_some(())
    })
    .await;
    assert!(
        ["checking-title", "done-title"].contains(&focused.as_str()) || {
            let now = b.client.active_element().await.expect("focus").attr("id").await.expect("id");
            matches!(now.as_deref(), Some("checking-title" | "done-title"))
        },
        "the focus moves to the new heading (was on #{focused})"
    );
    b.screenshot("sent-by-keyboard").await;
    b.close().await;
}

/// A bank's customer meets the bank's own journey, on a 390 px phone and on a 1366 px laptop: the
/// bank's name and logo, its privacy notice with the real retention and its policy link, advice
/// beside each file, a warning on a blurred photo (none on a sharp one) with a way to take it
/// again, and at the end the session's reference and the button back to the bank. No page scrolls
/// sideways. Screenshots: `test-artifacts/browser/<mode>/branded_journey_<width>/`.
#[tokio::test]
async fn a_bank_s_customer_meets_the_bank_s_journey_on_a_phone_and_a_laptop() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let inputs = TempDir::new("branded");
    let logo = inputs.0.join("logo.png");
    image::RgbImage::from_fn(480, 120, |x, y| {
        if (x / 40 + y / 40) % 2 == 0 {
            image::Rgb([0, 70, 140])
        } else {
            image::Rgb([255, 255, 255])
        }
    })
    .save(&logo)
    .unwrap();
    let blurred = blurred_passport(&inputs);
    svc.admin(&[
        "company",
        "set",
        &co.id,
        "--display-name",
        "Banque Exemple",
        "--logo",
        logo.to_str().unwrap(),
        "--accent",
        "#7A1F3D",
        "--privacy-controller",
        "Banque Exemple SA, 1 rue de la Paix, 75002 Paris",
        "--privacy-contact",
        "dpo@banque.example",
        "--privacy-policy-url",
        "https://banque.example/confidentialite",
        "--retention-days",
        "45",
    ]);
    let wf = workflow(&svc, &co, "identite", None);
    let return_url = "https://banque.example/espace/retour?dossier=7";

    for screen in [Screen::SmallPhone, Screen::Laptop] {
        let width = screen.width();
        let (s, created) = svc
            .post(
                &co.key,
                "/api/v1/verifications",
                json!({ "workflowId": wf, "returnUrl": return_url }),
            )
            .await;
        assert_eq!(s, 201, "{created}");
        let url = created["verificationUrl"].as_str().unwrap().to_owned();
        let b = Browser::start_with(&format!("branded_journey_{width}"), svc.mode, "fr-FR", screen).await;
        b.client.goto(&url).await.expect("open the journey");

        assert_eq!(b.client.title().await.unwrap(), "Banque Exemple — vérification d'identité");
        assert_eq!(b.text_of_css("[data-testid=journey-company-name]").await, "Banque Exemple");
        let logo_width = b
            .client
            .execute("return document.querySelector('[data-testid=journey-logo]').naturalWidth", vec![])
            .await
            .unwrap();
        assert!(
            logo_width.as_u64().is_some_and(|w| w > 0),
            "the logo loads under the page's CSP: {logo_width}"
        );
        let notice = b.text_of_css("[data-testid=journey-privacy]").await;
        for words in [
            "Banque Exemple SA, 1 rue de la Paix",
            "45 jours",
            "dpo@banque.example",
            "sous-traitant",
        ] {
            assert!(notice.contains(words), "{words}: {notice}");
        }
        let policy = b.testid("journey-privacy-link").await.attr("href").await.unwrap();
        assert_eq!(policy.as_deref(), Some("https://banque.example/confidentialite"));
        assert_fits(&b, width).await;
        b.screenshot("page").await;
        // On a wide screen, the link as a QR code to go on on a phone; none on a phone.
        let qr = b.testid("journey-handoff-qr").await;
        if screen == Screen::Laptop {
            assert!(qr.is_displayed().await.unwrap(), "the QR code on a laptop");
            let png = qr.screenshot().await.unwrap();
            assert_eq!(decode_qr(&png).as_deref(), Some(url.as_str()), "the QR code is the page's own link");
        } else {
            assert!(!qr.is_displayed().await.unwrap(), "no QR code on a phone");
        }

        // A blurred photo is kept, with a warning and a way to take it again; a sharp one is not.
        b.choose_file("front", &blurred).await;
        wait_uploaded(&b, "front", "Fichier reçu.").await;
        let warning = b.testid("upload-quality-warning").await;
        assert!(warning.text().await.unwrap().contains("floue"));
        assert!(b.testid("upload-retake").await.is_displayed().await.unwrap());
        assert_fits(&b, width).await;
        b.scroll_to("[data-testid=upload-quality-warning]").await;
        b.screenshot("blurred-photo-warning").await;
        b.choose_file("front", &Path::new(SAMPLES).join("sample-passeport-td3-valide.jpg"))
            .await;
        wait_uploaded(&b, "front", "Fichier reçu.").await;
        assert!(
            b.client
                .find(fantoccini::Locator::Css("[data-testid=upload-quality-warning]"))
                .await
                .is_err(),
            "no warning on a sharp photo"
        );
        b.choose_file(
            "selfie",
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faces/selfies/obama2.jpg"),
        )
        .await;
        wait_uploaded(&b, "selfie", "Fichier reçu.").await;
        b.screenshot("sharp-photos").await;

        b.click("submit").await;
        b.wait(WAIT, "the thank-you section", || async { b.displayed("done").await.then_some(()) })
            .await;
        let id = created["id"].as_str().unwrap();
        let reference = b.text_of_css("#done [data-testid=journey-reference]").await;
        let tail = id[id.len() - 8..].to_uppercase();
        assert!(reference.contains(&format!("{}-{}", &tail[..4], &tail[4..])), "{reference}");
        let back = b.css("#done a[data-testid=journey-return-link]").await;
        assert_eq!(back.attr("href").await.unwrap().as_deref(), Some(return_url));
        assert_fits(&b, width).await;
        b.screenshot("thank-you").await;

        // Without a returnUrl, the end has the reference and no button.
        let Session { id, url } = session(&svc, &co, &wf, "dossier-8").await;
        set_status(&svc, &id, "completed");
        b.client.goto(&url).await.unwrap();
        b.wait(WAIT, "the used-link page", || async {
            b.body_text().await.contains("Lien déjà utilisé").then_some(())
        })
        .await;
        assert!(b.body_text().await.contains(&id[id.len() - 4..].to_uppercase()));
        assert!(b
            .client
            .find(fantoccini::Locator::Css("[data-testid=journey-return-link]"))
            .await
            .is_err());
        assert_eq!(b.text_of_css("[data-testid=journey-company-name]").await, "Banque Exemple");
        assert_fits(&b, width).await;
        b.screenshot("used-link-without-return").await;
        b.close().await;
    }
}

/// The passport specimen blurred, as a shaken phone takes it, written in `dir`.
fn blurred_passport(dir: &TempDir) -> std::path::PathBuf {
    let blurred = dir.0.join("blurred.jpg");
    image::load_from_memory(&std::fs::read(Path::new(SAMPLES).join("sample-passeport-td3-valide.jpg")).unwrap())
        .unwrap()
        .blur(4.0)
        .save_with_format(&blurred, image::ImageFormat::Jpeg)
        .unwrap();
    blurred
}

/// Waits for the element `css` of a page that loads on its own time (scripts off).
async fn wait_for(b: &Browser, css: &str) -> fantoccini::elements::Element {
    b.wait(WAIT, css, || async { b.client.find(fantoccini::Locator::Css(css)).await.ok() })
        .await
}

/// Sends the form with the keyboard (Enter on its button): chromedriver's click waits on a timer
/// of the page's, which never fires with scripts off.
async fn send_with_keyboard(b: &Browser) {
    let button = b.client.find(fantoccini::Locator::Id("submit")).await.expect("#submit");
    button.send_keys(&Key::Enter.to_string()).await.expect("Enter on #submit");
}

/// With its scripts turned off, on a 390 px phone, the journey is a plain form: the company's
/// name and privacy notice, the files chosen then sent at once, the form back with its advice on
/// a blurred photo and a retake that is a plain label, the files sent as they are, then the page
/// being checked, which reloads itself until the thank-you. No page scrolls sideways. Screenshots: `test-artifacts/browser/<mode>/journey_without_script/`.
#[tokio::test]
async fn a_customer_without_javascript_sends_the_plain_form() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    svc.admin(&["company", "set", &co.id, "--display-name", "Banque Exemple"]);
    let wf = workflow(&svc, &co, "identite", None);
    let inputs = TempDir::new("noscript");
    let blurred = blurred_passport(&inputs);
    let Session { id, url } = session(&svc, &co, &wf, "dossier-sans-script").await;
    let width = Screen::SmallPhone.width();
    let b = Browser::start_without_script("journey_without_script", svc.mode, "fr-FR", Screen::SmallPhone).await;

    b.client.goto(&url).await.expect("open the journey");
    let form = wait_for(&b, "form#journey").await;
    assert_eq!(form.attr("method").await.unwrap().as_deref(), Some("post"));
    assert_eq!(b.text_of_css("[data-testid=journey-company-name]").await, "Banque Exemple");
    assert!(b.text_of_css("[data-testid=journey-privacy]").await.contains("Banque Exemple"));
    assert_fits(&b, width).await;
    b.screenshot("form").await;

    // Choosing a file sends nothing without the script: the submit sends them all.
    b.choose_file("front", &blurred).await;
    b.choose_file(
        "selfie",
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faces/selfies/obama2.jpg"),
    )
    .await;
    assert_eq!(uploads_stored(&svc, &id), 0, "nothing leaves before the submit");
    send_with_keyboard(&b).await;
    let warning = wait_for(&b, "[data-testid=upload-quality-warning]").await;
    assert!(warning.text().await.unwrap().contains("floue"));
    let retake = b.testid("upload-retake").await;
    assert_eq!(
        retake.tag_name().await.unwrap(),
        "label",
        "the retake opens the file picker without a script"
    );
    assert_eq!(uploads_stored(&svc, &id), 2, "both files are kept, the warned one too");
    assert_fits(&b, width).await;
    b.scroll_to("[data-testid=upload-quality-warning]").await;
    b.screenshot("advice-on-the-blurred-photo").await;

    // Sent as they are: the advice never blocks.
    send_with_keyboard(&b).await;
    b.wait(WAIT, "the page after the submit", || async {
        let text = b.client.find(fantoccini::Locator::Css("body")).await.ok()?.text().await.ok()?;
        (text.contains("Vérification en cours") || text.contains("Merci")).then_some(())
    })
    .await;
    let (_, session) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_ne!(session["status"], "started", "{session}");
    assert_fits(&b, width).await;
    b.screenshot("sent").await;
    // The page being checked reloads itself without its script, until the thank-you.
    b.wait(WAIT, "the thank-you page", || async {
        let text = b.client.find(fantoccini::Locator::Css("body")).await.ok()?.text().await.ok()?;
        text.contains("Merci").then_some(())
    })
    .await;
    assert!(b
        .text_of_css("[data-testid=journey-reference]")
        .await
        .contains(&id[id.len() - 4..].to_uppercase()));
    b.screenshot("thank-you").await;
    b.close().await;
}

/// The page is no wider than the screen: nothing scrolls sideways.
async fn assert_fits(b: &Browser, width: u32) {
    let scroll = b
        .client
        .execute("return document.documentElement.scrollWidth", vec![])
        .await
        .unwrap();
    assert!(
        scroll.as_u64().is_some_and(|w| w <= u64::from(width)),
        "scrollWidth {scroll} > {width}"
    );
}

/// The text of the QR code in a PNG (an element's screenshot).
fn decode_qr(png: &[u8]) -> Option<String> {
    use rxing::common::HybridBinarizer;
    use rxing::qrcode::cpp_port::QrReader;
    use rxing::{BinaryBitmap, DecodeHints, Luma8LuminanceSource, Reader};
    let image = image::load_from_memory(png).ok()?.to_luma8();
    let (w, h) = image.dimensions();
    let source = Luma8LuminanceSource::new(image.into_raw(), w, h).ok()?;
    let hints = DecodeHints {
        TryHarder: Some(true),
        ..DecodeHints::default()
    };
    QrReader
        .decode_with_hints(&mut BinaryBitmap::new(HybridBinarizer::new(source)), &hints)
        .ok()
        .map(|found| found.getText().to_owned())
}
