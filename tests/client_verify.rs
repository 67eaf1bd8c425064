//! `sceau client verify` through the real binary: a session is created with the key and URL from
//! the environment, and the QR code drawn in the terminal decodes to its link, which opens the
//! journey.

mod support;

use image::GrayImage;
use rxing::common::HybridBinarizer;
use rxing::qrcode::QRCodeReader;
use rxing::{BinaryBitmap, DecodeHints, Luma8LuminanceSource, Reader};
use std::process::Command;
use support::{Service, BIN};

/// The bit matrix drawn in half blocks (light as blocks, see `src/client/verify.rs`) as an image
/// of 4 pixels a module, decoded.
fn decode_half_blocks(rows: &[&str]) -> Option<String> {
    let modules: Vec<Vec<bool>> = rows
        .iter()
        .flat_map(|row| {
            let (top, bottom): (Vec<bool>, Vec<bool>) = row
                .chars()
                .map(|c| match c {
                    '█' => (false, false),
                    '▄' => (true, false),
                    '▀' => (false, true),
                    _ => (true, true),
                })
                .unzip();
            [top, bottom]
        })
        .collect();
    let (side, scale) = (modules[0].len() as u32, 4);
    let image = GrayImage::from_fn(side * scale, modules.len() as u32 * scale, |x, y| {
        let dark = modules[(y / scale) as usize][(x / scale) as usize];
        image::Luma([if dark { 0 } else { 255 }])
    });
    let (w, h) = image.dimensions();
    let source = Luma8LuminanceSource::new(image.into_raw(), w, h).ok()?;
    let hints = DecodeHints {
        TryHarder: Some(true),
        ..DecodeHints::default()
    };
    let result = QRCodeReader
        .decode_with_hints(&mut BinaryBitmap::new(HybridBinarizer::new(source)), &hints)
        .ok()?;
    Some(result.getText().to_owned())
}

#[tokio::test]
async fn a_session_is_created_and_its_link_drawn_as_a_qr_code_that_opens_the_journey() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.admin(&["workflow", "create", "--company", &co.id, "--name", "KYC", "--category", "identite"]);
    let out = Command::new(BIN)
        .args(["client", "verify", "--workflow", wf["id"].as_str().unwrap(), "--ref", "dossier-9"])
        .env("SCEAU_API_KEY", &co.key)
        .env("SCEAU_URL", &svc.base)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("VRF-"), "{stdout}");
    let url = lines[1];
    assert!(url.starts_with(&format!("{}/v/", svc.base)), "{stdout}");
    let qr: Vec<&str> = lines[2..].iter().copied().filter(|l| !l.is_empty()).collect();
    assert_eq!(decode_half_blocks(&qr).as_deref(), Some(url), "the QR code is the link");
    let id = lines[0].split(',').next().unwrap();
    let (_, session) = svc.get(&co.key, &format!("/api/v1/verifications/{id}")).await;
    assert_eq!(session["externalRef"], "dossier-9");
    assert_eq!(svc.http.get(url).send().await.unwrap().status(), 200);

    // Without a key, a clear error and no session.
    let out = Command::new(BIN)
        .args(["client", "verify", "--workflow", wf["id"].as_str().unwrap()])
        .env_remove("SCEAU_API_KEY")
        .env("SCEAU_URL", &svc.base)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SCEAU_API_KEY is not set"));
}
