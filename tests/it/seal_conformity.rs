//! A 2D-Doc seal that departs from the specification but carries the test authority's genuine
//! signature, through the real service (issue 13, item 1): the seal is verified and trusted, each
//! departure is a warning of its own with its reason, and the document is `suspect`, neither
//! `conforme` nor `non_conforme`.

use crate::support;

use std::time::Duration;

use common::test_fixtures::two_d_doc::sign_with_test_authority;
use common::test_fixtures::{helvetica, PdfFixture};
use image::{GrayImage, Luma};
use lopdf::{dictionary, Stream};
use rxing::{BarcodeFormat, Writer};
use serde_json::{json, Value};
use support::Service;

const GS: char = '\u{1d}';
const US: u8 = 0x1f;

/// An invoice (type 01) whose header has no issue date (`FFFF`, which §6 forbids for invoices) and
/// whose message holds an identifier §7 does not define (`ZZ`), signed by FR00/0001.
fn departing_seal() -> Vec<u8> {
    let signed = format!(
        "DC04FR000001FFFF264B0101FR10M/DEMO/VICTOR{GS}2215 RUE DE LA DEMONSTRATION{GS}241300125MARSEILLE{GS}\
         26FR18E2026110077{GS}ZZ42{GS}19EAU4410099{GS}1D38,65"
    );
    let mut payload = signed.clone().into_bytes();
    payload.push(US);
    payload.extend(
        data_encoding::BASE32_NOPAD
            .encode(&sign_with_test_authority(signed.as_bytes()))
            .bytes(),
    );
    payload
}

/// The printed invoice the seal's data match.
const LINES: &[&str] = &[
    "EAUX DE DEMONSTRATION",
    "1 rue de la Demo, 13001 Marseille",
    "Monsieur Victor DEMO",
    "15 RUE DE LA DEMONSTRATION",
    "13001 MARSEILLE",
    "Facture E2026110077",
    "Numero client : EAU4410099",
    "Montant TTC a payer : 38,65 EUR",
];

/// The DataMatrix symbol, 4 pixels a module, with a 4-module quiet zone.
fn symbol(payload: &[u8]) -> GrayImage {
    let text = std::str::from_utf8(payload).expect("C40 payloads are ASCII");
    let matrix = rxing::datamatrix::DataMatrixWriter
        .encode(text, &BarcodeFormat::DATA_MATRIX, 0, 0)
        .expect("encode");
    let (module, quiet) = (4, 4);
    let (w, h) = (matrix.width() + 2 * quiet, matrix.height() + 2 * quiet);
    GrayImage::from_fn(w * module, h * module, |x, y| {
        let (mx, my) = (x / module, y / module);
        let inside = mx >= quiet && my >= quiet && mx < w - quiet && my < h - quiet;
        Luma([if inside && matrix.get(mx - quiet, my - quiet) { 0 } else { 255 }])
    })
}

/// One A4 page: the lines in Helvetica, the seal at the top right.
fn invoice_pdf(code: &GrayImage) -> Vec<u8> {
    let mut pdf = PdfFixture::new();
    let image = Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => code.width() as i64, "Height" => code.height() as i64,
            "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
        },
        code.as_raw().clone(),
    );
    let image = pdf.document().add_object(image);
    let mut content = String::from("q 130 0 0 130 420 660 cm /Im1 Do Q\nBT /F1 11 Tf 50 780 Td 15 TL\n");
    for line in LINES {
        content.push_str(&format!("({line}) Tj T*\n"));
    }
    content.push_str("ET\n");
    let resources = dictionary! { "Font" => helvetica(), "XObject" => dictionary! { "Im1" => image } };
    pdf.page(resources, content).bytes()
}

#[tokio::test]
async fn a_genuine_seal_that_departs_from_the_spec_is_verified_and_suspect() {
    let svc = Service::start(&[("SCEAU_ACCEPT_TEST_CA", "1")]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (status, body) = svc
        .deposit(&co.key, &batch, "administratif", &invoice_pdf(&symbol(&departing_seal())))
        .await;
    assert_eq!(status, 201, "{body}");
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(120), |b| b["status"] == "ended")
        .await;
    let id = done["items"][0]["consultationId"].as_str().expect("consultation id");
    let (status, c) = svc.get(&co.key, &format!("/api/v1/consultations/{id}")).await;
    assert_eq!(status, 200, "{c}");

    let seal = &c["twoDDoc"];
    assert_eq!(
        (
            &seal["readStatus"],
            &seal["signatureStatus"],
            &seal["signatureVerified"],
            &seal["trusted"],
            &seal["dataMatches"]
        ),
        (&json!("read"), &json!("valid"), &json!(true), &json!(true), &json!(true)),
        "{c}"
    );
    assert_eq!(c["verdict"], "suspect", "{c}");
    assert_eq!(c["hasRejectAnomaly"], false, "{c}");
    let departures: Vec<&Value> = c["anomalies"]
        .as_array()
        .expect("anomalies")
        .iter()
        .filter(|a| a["code"] == "twoddoc_non_conformity")
        .collect();
    assert_eq!(departures.len(), 2, "one point of attention per departure: {c}");
    let messages: Vec<&str> = departures.iter().filter_map(|a| a["message"].as_str()).collect();
    assert!(messages[0].contains("document type 01 requires an issue date (§6)"), "{messages:?}");
    assert!(
        messages[1].contains("data identifier 'ZZ'") && messages[1].contains("(§3.4.4)"),
        "{messages:?}"
    );
    assert!(departures.iter().all(|a| a["severity"] == "warning"), "{c}");
}
