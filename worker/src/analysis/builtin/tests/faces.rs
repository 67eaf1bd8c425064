//! The engine with face match on: the portrait looked for on every identity document, the
//! selfie compared with it when the customer consented, and what the report says of each.

use domain::analysis::Check;
use domain::face_match::{FaceMatch, NotCheckedReason};
use domain::vocabulary::{DocumentCategory, Verdict};

use super::{analyse, codes, engine_calling, engine_with, input, shared_data};
use crate::analysis::external::ExternalOptions;

fn face(path: &str) -> Vec<u8> {
    let path = format!("{}/../tests/faces/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn a_card_with_a_valid_zone_and_no_face_is_suspect_for_its_missing_portrait() {
    let silhouette = std::fs::read(shared_data().join("samples/identite/sample-cni-td1-valide.png")).expect("sample");
    let report = analyse(&engine_with(true), input(DocumentCategory::Identite, silhouette))
        .await
        .expect("report");
    assert_eq!(codes(&report), vec!["portrait_missing"]);
    assert_eq!(report.verdict, Verdict::Suspect);
    assert_eq!(report.face_match, None, "no selfie came");
}

#[tokio::test]
async fn a_selfie_is_compared_only_with_consent_and_the_outcome_is_recorded() {
    let engine = engine_with(true);
    let mut journey = input(DocumentCategory::Identite, face("cards/obama-obama-pitch20.jpg"));
    journey.selfie = Some(face("selfies/obama3.jpg"));
    let report = analyse(&engine, journey.clone()).await.expect("report");
    let Some(FaceMatch::Match { similarity }) = report.face_match.map(|f| f.outcome) else {
        panic!("{:?}", report.face_match);
    };
    assert!(similarity > 0.5, "{similarity}");
    let card = report.face_match.and_then(|f| f.document_face).expect("where the portrait is");
    // The portrait of the card photographed on a table: left of its middle, in the 1000 × 714 photo.
    assert_eq!((card.image_width, card.image_height, card.turns), (1000, 714, 0));
    assert!(
        card.left > 200.0 && card.left + card.width < 500.0 && card.height > 50.0,
        "{card:?}"
    );
    assert!(report.checks.iter().any(|c| c.check == Check::FaceMatch && c.passed));
    assert!(codes(&report).contains(&"liveness_not_checked"), "{:?}", codes(&report));
    assert!(!codes(&report).contains(&"portrait_missing"));

    journey.biometric_consent = false;
    let report = analyse(&engine, journey).await.expect("report");
    assert_eq!(
        report.face_match.map(|f| f.outcome),
        Some(FaceMatch::NotChecked {
            reason: NotCheckedReason::NoConsent
        })
    );
    assert!(!report.checks.iter().any(|c| c.check == Check::FaceMatch));
    let not_checked = report
        .anomalies
        .iter()
        .find(|a| a.code.as_str() == "selfie_not_checked")
        .expect("not checked");
    assert!(not_checked.message.contains("did not consent"), "{}", not_checked.message);
    assert!(
        not_checked.message_fr().contains("n’a pas consenti"),
        "{}",
        not_checked.message_fr()
    );
}

#[tokio::test]
async fn a_selfie_of_someone_else_is_rejected_and_an_empty_one_is_not_checked() {
    let engine = engine_with(true);
    let mut journey = input(DocumentCategory::Identite, face("cards/collins-collins-yaw-20.jpg"));
    journey.selfie = Some(face("selfies/obama.jpg"));
    let report = analyse(&engine, journey.clone()).await.expect("report");
    assert!(
        matches!(report.face_match.map(|f| f.outcome), Some(FaceMatch::Mismatch { .. })),
        "{:?}",
        report.face_match
    );
    assert_eq!(report.verdict, Verdict::NonConforme);
    assert!(report.checks.iter().any(|c| c.check == Check::FaceMatch && !c.passed));

    journey.selfie = Some(super::files::png());
    let report = analyse(&engine, journey).await.expect("report");
    assert_eq!(
        report.face_match.map(|f| f.outcome),
        Some(FaceMatch::NotChecked {
            reason: NotCheckedReason::NoFaceOnSelfie
        })
    );
}

/// An external service that says every selfie is someone else, on a free loopback port.
async fn external_saying_mismatch() -> String {
    let app = axum::Router::new().route(
        "/analyse",
        axum::routing::post(|| async {
            (
                [("content-type", "application/json")],
                r#"{"selfie":{"checked":true,"match":false,"score":0.1},"signals":[]}"#,
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/analyse")
}

#[tokio::test]
async fn the_external_service_s_answer_is_reported_beside_sceau_s_own() {
    let external = ExternalOptions {
        url: external_saying_mismatch().await,
        token: None,
        timeout: std::time::Duration::from_secs(10),
        attempts: 1,
    };
    let engine = engine_calling(true, Some(external));
    let mut journey = input(DocumentCategory::Identite, face("cards/obama-obama-flat.jpg"));
    journey.selfie = Some(face("selfies/obama.jpg"));
    let report = analyse(&engine, journey).await.expect("report");
    assert!(
        matches!(report.face_match.map(|f| f.outcome), Some(FaceMatch::Match { .. })),
        "{:?}",
        report.face_match
    );
    assert!(report.checks.iter().any(|c| c.check == Check::FaceMatch && c.passed));
    assert!(report.checks.iter().any(|c| c.check == Check::SelfieMatch && !c.passed));
    let external_says = report
        .anomalies
        .iter()
        .find(|a| a.code.as_str() == "selfie_mismatch")
        .expect("the service's mismatch");
    assert!(
        external_says.message.contains("by the external analysis service"),
        "{}",
        external_says.message
    );
    assert_eq!(report.verdict, Verdict::NonConforme, "a reject anomaly, whoever says it");
}
