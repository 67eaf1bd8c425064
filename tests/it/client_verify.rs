//! `sceau client verify` through the real binary: a session is created with the key and URL from
//! the environment, and the QR code drawn in the terminal decodes to its link, which opens the
//! journey.

use crate::support;

use rxing::qrcode::decoder::qrcode_decoder::decode_bool_array;
use std::process::Command;
use support::{Service, BIN};

/// Light modules framing the code (see `src/client/verify.rs`).
const QUIET: usize = 2;

/// The bit matrix drawn in half blocks (light as blocks, see `src/client/verify.rs`), its light
/// frame checked then stripped, decoded module by module. The grid is decoded as it is drawn,
/// not through an image: rxing's detector misses about one code in a hundred at any scale
/// (codes that zxing-cpp reads), and finding a code in a picture is the phone's job, not what
/// this test is about.
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
    let side = modules[0].len().checked_sub(2 * QUIET)?;
    let inside = |i: usize| (QUIET..QUIET + side).contains(&i);
    let framed_in_light = modules
        .iter()
        .enumerate()
        .all(|(y, row)| row.len() == side + 2 * QUIET && row.iter().enumerate().all(|(x, dark)| !dark || (inside(x) && inside(y))));
    assert!(framed_in_light, "the code sits in a light frame of {QUIET} modules");
    let grid: Vec<Vec<bool>> = modules
        .get(QUIET..QUIET + side)?
        .iter()
        .map(|row| row[QUIET..QUIET + side].to_vec())
        .collect();
    decode_bool_array(&grid).ok().map(|decoded| decoded.getText().to_owned())
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
