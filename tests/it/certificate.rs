//! The PDF certificate as a reader sees it (rendered by poppler, its QR code decoded by rxing) and
//! the public authenticity page its QR code leads to: genuine links confirm, forged ones are
//! refused, and neither the certificate nor the page leaks to another company or to the public.

use crate::support;

use rxing::common::{GlobalHistogramBinarizer, HybridBinarizer};
use rxing::qrcode::cpp_port::QrReader;
use rxing::{BinaryBitmap, DecodeHints, Luma8LuminanceSource, Reader};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::Service;

fn poppler(tool: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("`{tool}` cannot run ({e}): poppler-utils is missing, run scripts/system-deps"));
    assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The text of the QR code on the first page, rendered at 150 dpi like a print scanned back; as a
/// phone does with its next frames, further looks at 200 and 300 dpi, each with a second
/// binarizer, when the first finds nothing. The reader is rxing's port of zxing-cpp: its older
/// `QRCodeReader` misses about one code in a hundred whatever the scale (21 of 2,000 clean
/// renderings of journey links, where the port read all 2,000).
fn qr_text(pdf: &Path) -> String {
    ["150", "200", "300"]
        .into_iter()
        .find_map(|dpi| qr_text_at(pdf, dpi))
        .expect("a QR code on the certificate")
}

fn qr_text_at(pdf: &Path, dpi: &str) -> Option<String> {
    let prefix = pdf.with_extension("");
    let prefix = prefix.to_str().unwrap();
    poppler("pdftoppm", &["-r", dpi, "-png", "-singlefile", pdf.to_str().unwrap(), prefix]);
    let page = image::open(format!("{prefix}.png")).expect("pdftoppm wrote a PNG").to_luma8();
    let (w, h) = page.dimensions();
    let source = || Luma8LuminanceSource::new(page.as_raw().clone(), w, h).expect("a luminance source");
    let hints = DecodeHints {
        TryHarder: Some(true),
        ..DecodeHints::default()
    };
    let hybrid = QrReader.decode_with_hints(&mut BinaryBitmap::new(HybridBinarizer::new(source())), &hints);
    let result = hybrid
        .or_else(|_| QrReader.decode_with_hints(&mut BinaryBitmap::new(GlobalHistogramBinarizer::new(source())), &hints))
        .ok()?;
    Some(result.getText().to_owned())
}

async fn certificate(svc: &Service, key: &str, csl: &str) -> reqwest::Response {
    svc.http
        .get(svc.url(&format!("/api/v1/consultations/{csl}/certificate")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

/// A public GET, no API key, in `lang` when given.
async fn public(svc: &Service, url: &str, lang: Option<&str>) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = svc.http.get(url);
    if let Some(lang) = lang {
        request = request.header("accept-language", lang);
    }
    let r = request.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.unwrap())
}

#[tokio::test]
async fn certificate_carries_a_qr_code_to_a_genuine_authenticity_page() {
    let svc = Service::start(&[]).await;
    let a = svc.company();
    let b = svc.company();
    let batch = svc.open_batch(&a.key, None).await;
    for i in 0..2u8 {
        let body = json!({ "documentCategory": "identite", "document": support::b64(&support::png(320, i)), "externalRef": format!("Dupont-{i}") });
        assert_eq!(svc.post(&a.key, &format!("/api/v1/batches/{batch}/documents"), body).await.0, 201);
    }
    svc.post(&a.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&a.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    let csl = done["items"][0]["consultationId"].as_str().unwrap().to_owned();
    let other = done["items"][1]["consultationId"].as_str().unwrap().to_owned();
    let consultation = svc.get(&a.key, &format!("/api/v1/consultations/{csl}")).await.1;

    // Generation time, reported (not asserted): the first call includes a cold reader.
    let mut timings = Vec::new();
    let mut bodies = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let r = certificate(&svc, &a.key, &csl).await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "application/pdf");
        bodies.push(r.bytes().await.unwrap());
        timings.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    eprintln!(
        "certificate round trips (ms): {:?}",
        timings.iter().map(|t| format!("{t:.1}")).collect::<Vec<_>>()
    );
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "the same consultation gives the same bytes"
    );
    let pdf = &bodies[0];

    let dir = support::TempDir::new("certificate");
    let file = dir.0.join("certificate.pdf");
    std::fs::write(&file, pdf).unwrap();
    let text = String::from_utf8(poppler("pdftotext", &["-layout", file.to_str().unwrap(), "-"])).unwrap();
    for expected in [
        "Certificat d’analyse documentaire",
        "Vérifications réalisées",
        "Analysé le",
        "Catégorie : Document d’identité",
        "Type de document : Non déterminé",
        "Points d’attention",
        "Vérifier l’authenticité",
        "Intégrité du fichier",
        // The point of attention of an image without a zone, in French.
        "Aucune bande MRZ",
        csl.as_str(),
    ] {
        assert!(text.contains(expected), "`{expected}` missing from:\n{text}");
    }
    assert!(!text.contains('?'), "a character did not encode:\n{text}");
    assert!(!text.contains("machine-readable"), "no English message on the certificate:\n{text}");
    assert!(
        !text.to_lowercase().contains("selfie"),
        "the built-in engine does not match selfies:\n{text}"
    );
    assert!(!text.contains("Dupont"), "no client reference on the certificate");

    let url = qr_text(&file);
    assert!(url.starts_with(&svc.url(&format!("/authenticite/{csl}."))), "{url}");
    assert!(
        text.contains(&url) || text.replace(char::is_whitespace, "").contains(&url),
        "the link is also printed"
    );

    // The genuine page: public, no personal data, French by default.
    let (status, headers, page) = public(&svc, &url, None).await;
    assert_eq!(status, 200, "{page}");
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["x-robots-tag"], "noindex");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'none'") && !csp.contains("unsafe"), "{csp}");
    assert!(
        page.contains("<html lang=\"fr\">") && page.contains("<h1>Certificat authentique</h1>"),
        "{page}"
    );
    assert!(page.contains(&csl), "{page}");
    let verdict = consultation["verdict"].as_str().unwrap();
    let label = match verdict {
        "suspect" => "Suspect",
        "analyse_impossible" => "Analyse impossible",
        "non_conforme" => "Non conforme",
        "sans_anomalie" => "Sans anomalie détectée",
        _ => "Conforme",
    };
    assert!(page.contains(&format!("<dd>{label}</dd>")), "verdict {verdict}: {page}");
    let analyzed = consultation["analyzedAt"].as_str().unwrap();
    let (year, month, day) = (&analyzed[..4], &analyzed[5..7], &analyzed[8..10]);
    assert!(page.contains(&format!("<dd>{day}/{month}/{year} à ")), "{page}");
    for private in ["Dupont", "Test SA", &a.id] {
        assert!(!page.contains(private), "`{private}` on the public page");
    }
    assert!(!page.contains("http"), "no external asset: {page}");

    let (status, headers, page) = public(&svc, &url, Some("en-GB,en;q=0.9,fr;q=0.5")).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-language"], "en");
    assert!(
        page.contains("<html lang=\"en\">") && page.contains("Genuine certificate"),
        "{page}"
    );

    // Forged links: one character of the signature changed, or this signature on another id.
    let (prefix, signature) = url.rsplit_once('.').unwrap();
    let mut altered: Vec<char> = signature.chars().collect();
    altered[3] = if altered[3] == 'x' { 'y' } else { 'x' };
    let altered: String = altered.into_iter().collect();
    let swapped = url.replace(&csl, &other);
    for forged in [
        format!("{prefix}.{altered}"),
        swapped,
        svc.url(&format!("/authenticite/{csl}")),
        svc.url("/authenticite/nothing-here"),
    ] {
        let (status, headers, page) = public(&svc, &forged, None).await;
        assert_eq!(status, 404, "{forged}");
        assert_eq!(headers["x-robots-tag"], "noindex");
        assert!(
            page.contains("Lien de certificat non valide") && page.contains("falsifié"),
            "{page}"
        );
        assert!(!page.contains(&csl) && !page.contains(&other), "a forged link reveals nothing");
        let (_, _, page) = public(&svc, &forged, Some("en")).await;
        assert!(page.contains("Invalid certificate link") && page.contains("forged"), "{page}");
    }

    // The other consultation's genuine link comes from its own certificate.
    let r = certificate(&svc, &a.key, &other).await;
    assert_eq!(r.status(), 200);
    assert_ne!(r.bytes().await.unwrap(), *pdf, "each consultation has its own certificate");

    // Another company's key cannot download it.
    let (s, body) = svc.get(&b.key, &format!("/api/v1/consultations/{csl}/certificate")).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));
    let r = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{csl}/certificate")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the certificate itself needs an API key");
}

/// The value printed after `label : ` on the certificate (`pdftotext -layout` puts the QR code's
/// caption on the same line, after a run of spaces).
fn printed(text: &str, label: &str) -> String {
    let prefix = format!("{label} : ");
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("`{label}` not printed:\n{text}"));
    let value = &line[prefix.len()..];
    value.split("   ").next().unwrap_or(value).trim().to_owned()
}

/// The fingerprint in the footer (`… — empreinte XXXX XXXX … — 1/1`), its spaces removed.
fn printed_fingerprint(text: &str) -> String {
    let (_, after) = text
        .split_once("— empreinte ")
        .unwrap_or_else(|| panic!("no fingerprint in the footer:\n{text}"));
    let fingerprint: String = after.split('—').next().unwrap().chars().filter(|c| !c.is_whitespace()).collect();
    assert_eq!(fingerprint.len(), 24, "{fingerprint}");
    fingerprint
}

/// The page's fingerprint (the element with id `fingerprint`), its spaces removed.
fn page_fingerprint(page: &str) -> String {
    let (_, after) = page
        .split_once("id=\"fingerprint\">")
        .unwrap_or_else(|| panic!("no fingerprint on the page: {page}"));
    after.split('<').next().unwrap().chars().filter(|c| !c.is_whitespace()).collect()
}

async fn certificate_text(svc: &Service, key: &str, csl: &str, dir: &support::TempDir, name: &str) -> (String, String) {
    let r = certificate(svc, key, csl).await;
    assert_eq!(r.status(), 200);
    let file = dir.0.join(name);
    std::fs::write(&file, r.bytes().await.unwrap()).unwrap();
    let text = String::from_utf8(poppler("pdftotext", &["-layout", file.to_str().unwrap(), "-"])).unwrap();
    (text, qr_text(&file))
}

#[tokio::test]
async fn the_authenticity_page_states_what_the_certificate_prints_and_its_fingerprint() {
    let svc = Service::start(&[]).await;
    let a = svc.company();
    // A journey, so the result has a decision and waits for a review (a photo without a zone is
    // `suspect`, hence `a_verifier`).
    let workflow = support::journey::workflow(&svc, &a, "identite", None);
    let (photo, selfie) = (support::png(320, 7), support::png(200, 8));
    let files: [(&str, &[u8], &str); 2] = [("front", &photo, "image/png"), ("selfie", &selfie, "image/png")];
    let (_, csl) = support::journey::complete(&svc, &a, &workflow, "Durand-7", &files).await;
    let dir = support::TempDir::new("certificate-facts");
    let (text, url) = certificate_text(&svc, &a.key, &csl, &dir, "before.pdf").await;
    let (status, _, page) = public(&svc, &url, None).await;
    assert_eq!(status, 200, "{page}");

    // Every fact the certificate prints is on the page, in the same words.
    for label in [
        "Consultation",
        "Analysé le",
        "Enregistré le",
        "Catégorie",
        "Type de document",
        "Pays",
        "Décision",
        "Revue humaine",
    ] {
        let value = printed(&text, label);
        assert!(
            page.contains(&format!("<dt>{label}</dt><dd>{value}</dd>")),
            "{label} : {value} is not on the page: {page}"
        );
    }
    let verdict = printed(&text, "Verdict");
    assert!(page.contains(&format!("<dt>Verdict</dt><dd>{verdict}</dd>")), "{page}");
    let checks: Vec<&str> = text.lines().filter_map(|l| l.trim().strip_prefix("•")).map(str::trim).collect();
    assert!(!checks.is_empty(), "the built-in engine performs at least one check:\n{text}");
    for check in &checks {
        assert!(page.contains(&format!("<li>{check}</li>")), "check `{check}` missing: {page}");
    }
    let consultation = svc.get(&a.key, &format!("/api/v1/consultations/{csl}")).await.1;
    let anomalies = consultation["anomalies"].as_array().unwrap();
    assert!(!anomalies.is_empty(), "an image without a zone has a point of attention");
    for anomaly in anomalies {
        let code = anomaly["code"].as_str().unwrap();
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| l.ends_with(&format!("— {code}")))
            .unwrap_or_else(|| panic!("point of attention {code} not printed:\n{text}"));
        assert!(page.contains(&format!("<strong>{line}</strong>")), "`{line}` missing: {page}");
    }
    let fingerprint = printed_fingerprint(&text);
    assert_eq!(page_fingerprint(&page), fingerprint, "the page recomputes the printed fingerprint");
    for private in ["Durand", &a.id] {
        assert!(!page.contains(private), "`{private}` on the public page");
    }
    let (_, _, english) = public(&svc, &url, Some("en")).await;
    assert_eq!(
        page_fingerprint(&english),
        fingerprint,
        "the fingerprint does not depend on the language"
    );
    assert!(
        english.contains("Checks performed") && english.contains("Points of attention"),
        "{english}"
    );

    // Settling the review changes the facts: the page says so, and still vouches for the
    // certificate downloaded before it.
    assert_eq!(
        printed(&text, "Revue humaine"),
        "En attente",
        "this document waits for review:\n{text}"
    );
    svc.admin(&["review", "accept", &csl]);
    let (_, _, settled) = public(&svc, &url, None).await;
    assert!(settled.contains("<dt>Revue humaine</dt><dd>Acceptée</dd>"), "{settled}");
    assert_ne!(page_fingerprint(&settled), fingerprint, "the review is part of the facts");
    let earlier = fingerprint
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(settled.contains(&earlier), "the fingerprint before the review is given: {settled}");
    let (after, _) = certificate_text(&svc, &a.key, &csl, &dir, "after.pdf").await;
    assert_eq!(printed(&after, "Revue humaine"), "Acceptée");
    assert_eq!(printed_fingerprint(&after), page_fingerprint(&settled));
}
