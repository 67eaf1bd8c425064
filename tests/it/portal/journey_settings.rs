//! The settings page's "Parcours client" section: what the customers' journey shows of the
//! company, set by an owner or an admin in one multipart form, each field checked, the logo
//! re-encoded; the dashboard warns until the privacy notice names a controller or a contact.

use super::{Member, Service};
use reqwest::multipart::{Form, Part};

/// A small PNG logo, made here so the service's re-encoding can be told from it.
fn logo_png() -> Vec<u8> {
    let image = image::RgbImage::from_fn(300, 100, |x, _| image::Rgb([(x % 200) as u8, 30, 120]));
    let mut bytes = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .expect("a PNG");
    bytes.extend_from_slice(b"trailing bytes the re-encoding drops");
    bytes
}

/// Posts the section's form with `fields` (every text field is sent, as a browser does) and the
/// `logo` file when given: (status, Location, body).
async fn post(member: &Member, fields: &[(&str, &str)], logo: Option<(Vec<u8>, &str)>) -> (u16, Option<String>, String) {
    let csrf = member.get("/portal/account").await.field("csrf");
    let mut form = Form::new().text("csrf", csrf);
    for name in [
        "displayName",
        "accentColor",
        "privacyController",
        "privacyContact",
        "privacyPurpose",
        "privacyPolicyUrl",
    ] {
        let value = fields.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| *v);
        form = form.text(name, value.to_owned());
    }
    let part = match logo {
        Some((bytes, mime)) => Part::bytes(bytes).file_name("logo").mime_str(mime).expect("mime"),
        None => Part::bytes(Vec::new())
            .file_name("")
            .mime_str("application/octet-stream")
            .expect("mime"),
    };
    form = form.part("logo", part);
    let response = member
        .client
        .post(format!("{}/portal/settings/journey", member.base))
        .multipart(form)
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    let location = response.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
    (status, location, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn an_owner_sets_the_journey_s_name_logo_colour_and_privacy_notice() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let dashboard = owner.get("/portal/").await;
    assert!(dashboard.body.contains("data-testid=\"privacy-warning\""), "{}", dashboard.body);

    let settings = owner.get("/portal/settings").await;
    for name in [
        "displayName",
        "logo",
        "accentColor",
        "privacyController",
        "privacyContact",
        "privacyPurpose",
        "privacyPolicyUrl",
    ] {
        assert!(settings.body.contains(&format!("name=\"{name}\"")), "{name}: {}", settings.body);
    }

    // Each refusal names what is wrong and stores nothing.
    for (fields, logo, words) in [
        (vec![("accentColor", "blue")], None, "#RRGGBB"),
        (vec![("privacyPolicyUrl", "http://banque.example/vie-privee")], None, "https://"),
        (
            vec![("displayName", "Banque Exemple")],
            Some((b"GIF89a not a logo".to_vec(), "image/gif")),
            "PNG ou JPEG",
        ),
        (vec![], Some((vec![0x89; 210 * 1024], "image/png")), "200 Ko"),
    ] {
        let (status, _, body) = post(&owner, &fields, logo).await;
        assert_eq!(status, 422, "{fields:?}: {body}");
        assert!(body.contains(words), "{fields:?}: {body}");
    }
    // Far over the limit, the body itself is cut short: the same words, 413.
    let (status, _, body) = post(&owner, &[], Some((vec![0x89; 300 * 1024], "image/png"))).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("200 Ko"), "{body}");
    let unchanged = svc.admin(&["company", "show", &co.id]);
    assert_eq!(unchanged["journey"]["displayName"], serde_json::Value::Null, "{unchanged}");

    let fields = [
        ("displayName", "Banque Exemple"),
        ("accentColor", "#AA0033"),
        ("privacyController", "Banque Exemple SA, 1 rue de la Paix, 75002 Paris"),
        ("privacyContact", "dpo@banque.example"),
        ("privacyPolicyUrl", "https://banque.example/confidentialite"),
    ];
    let (status, location, body) = post(&owner, &fields, Some((logo_png(), "image/png"))).await;
    assert_eq!(
        (status, location.as_deref()),
        (303, Some("/portal/settings?flash=journey#journey")),
        "{body}"
    );
    let shown = svc.admin(&["company", "show", &co.id]);
    let journey = &shown["journey"];
    assert_eq!(
        (
            journey["displayName"].as_str(),
            journey["accentColor"].as_str(),
            journey["hasLogo"].as_bool()
        ),
        (Some("Banque Exemple"), Some("#aa0033"), Some(true)),
        "{shown}"
    );
    assert_eq!(journey["privacyContact"], "dpo@banque.example");
    let saved = owner.get("/portal/settings?flash=journey").await;
    assert!(
        saved.body.contains("value=\"Banque Exemple\"") && saved.body.contains("value=\"#AA0033\""),
        "{}",
        saved.body
    );
    assert!(saved.body.contains("name=\"removeLogo\""), "a logo to remove: {}", saved.body);
    let dashboard = owner.get("/portal/").await;
    assert!(!dashboard.body.contains("privacy-warning"), "{}", dashboard.body);
    let audit = owner.get("/portal/audit?action=company.settings").await;
    assert!(audit.body.contains("journey: displayName, accentColor, logo"), "{}", audit.body);

    // Removing the logo and clearing a field (every field is sent: empty clears).
    let csrf = owner.get("/portal/settings").await.field("csrf");
    let form = Form::new()
        .text("csrf", csrf)
        .text("displayName", "Banque Exemple")
        .text("accentColor", "")
        .text("removeLogo", "on")
        .text("privacyController", "Banque Exemple SA")
        .text("privacyContact", "")
        .text("privacyPurpose", "")
        .text("privacyPolicyUrl", "");
    let response = owner
        .client
        .post(format!("{}/portal/settings/journey", owner.base))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    let shown = svc.admin(&["company", "show", &co.id]);
    assert_eq!(
        (shown["journey"]["hasLogo"].as_bool(), &shown["journey"]["accentColor"]),
        (Some(false), &serde_json::Value::Null),
        "{shown}"
    );

    // A developer manages keys, not what customers see.
    let developer = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let (status, _, _) = post(&developer, &fields, None).await;
    assert_eq!(status, 403);
}
