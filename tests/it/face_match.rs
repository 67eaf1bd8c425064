//! Face match over real HTTP, on the real binary: a journey's selfie compared with its document's
//! portrait when the customer consents, reported as anomalies with their similarity; no consent
//! leaves the selfie to a reviewer; an identity document without a face says its portrait is
//! missing. The photographs are the test set of `tests/faces/` (its README gives their sources).

use crate::support;

use serde_json::Value;
use support::journey::{complete_answering, workflow};
use support::{Company, Service};

const FACE_MATCH_ON: (&str, &str) = ("SCEAU_FACE_MATCH", "true");

fn face(path: &str) -> Vec<u8> {
    let path = format!("{}/tests/faces/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn consultation(svc: &Service, co: &Company, id: &str) -> Value {
    let (s, body) = svc.get(&co.key, &format!("/api/v1/consultations/{id}")).await;
    assert_eq!(s, 200, "{body}");
    body
}

fn anomaly<'a>(consultation: &'a Value, code: &str) -> Option<&'a Value> {
    consultation["anomalies"].as_array()?.iter().find(|a| a["code"] == code)
}

fn codes(consultation: &Value) -> Vec<String> {
    consultation["anomalies"]
        .as_array()
        .map(|all| all.iter().filter_map(|a| a["code"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_consenting_customer_s_selfie_is_compared_with_the_portrait_of_the_document() {
    let svc = Service::start(&[FACE_MATCH_ON]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let card = face("cards/obama-obama-yaw20.jpg");
    let journey = |reference: &'static str, selfie: Vec<u8>, consent: bool| {
        let (svc, co, wf, card) = (&svc, &co, &wf, &card);
        async move {
            let files: [(&str, &[u8], &str); 2] = [("front", card, "image/jpeg"), ("selfie", &selfie, "image/jpeg")];
            let (_, id) = complete_answering(svc, co, wf, reference, &files, consent).await;
            consultation(svc, co, &id).await
        }
    };

    let same = journey("same-person", face("selfies/obama2.jpg"), true).await;
    assert!(
        anomaly(&same, "selfie_mismatch").is_none() && anomaly(&same, "selfie_uncertain").is_none(),
        "{same}"
    );
    assert!(anomaly(&same, "selfie_not_checked").is_none(), "{same}");
    let liveness = anomaly(&same, "liveness_not_checked").unwrap_or_else(|| panic!("{same}"));
    assert_eq!(liveness["severity"], "info");
    assert!(anomaly(&same, "portrait_missing").is_none(), "the card shows a face: {same}");

    let other = journey("someone-else", face("selfies/biden.jpg"), true).await;
    let mismatch = anomaly(&other, "selfie_mismatch").unwrap_or_else(|| panic!("{other}"));
    assert_eq!(mismatch["severity"], "reject");
    assert!(mismatch["message"].as_str().unwrap().contains("(similarity 0."), "{mismatch}");
    assert_eq!(
        (other["verdict"].as_str(), other["decision"].as_str()),
        (Some("non_conforme"), Some("refuse"))
    );
    assert!(anomaly(&other, "liveness_not_checked").is_some(), "{other}");

    let two = journey("two-faces", face("selfies/two-people.jpg"), true).await;
    assert_eq!(
        anomaly(&two, "selfie_multiple_faces").map(|a| &a["severity"]),
        Some(&Value::from("warning")),
        "{two}"
    );
    assert!(anomaly(&two, "selfie_mismatch").is_none(), "the largest face is Obama's: {two}");

    let refused = journey("no-consent", face("selfies/obama2.jpg"), false).await;
    let not_checked = anomaly(&refused, "selfie_not_checked").unwrap_or_else(|| panic!("{refused}"));
    assert!(
        not_checked["message"].as_str().unwrap().contains("did not consent"),
        "{not_checked}"
    );
    assert!(anomaly(&refused, "liveness_not_checked").is_none(), "{refused}");
    assert_eq!(refused["decision"], "a_verifier", "a person compares the selfie: {refused}");
    assert_eq!(refused["reviewStatus"], "pending", "{refused}");
}

#[tokio::test]
async fn an_identity_document_without_a_face_says_its_portrait_is_missing_and_with_it_off_nothing_is_compared() {
    let svc = Service::start(&[FACE_MATCH_ON]).await;
    let co = svc.company();
    let silhouette = std::fs::read("/work/shared/data/samples/identite/sample-cni-td1-valide.png").expect("the shared sample");
    let batch = svc.open_batch(&co.key, None).await;
    let (s, body) = svc.deposit(&co.key, &batch, "identite", &silhouette).await;
    assert_eq!(s, 201, "{body}");
    let (s, body) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), Value::Null).await;
    assert_eq!(s, 200, "{body}");
    let done = svc
        .wait_batch(&co.key, &batch, support::journey::WAIT, |b| b["counts"]["pending"] == 0)
        .await;
    let id = svc.consultation_ids(&co.key).await.pop().unwrap_or_else(|| panic!("{done}"));
    let found = consultation(&svc, &co, &id).await;
    assert_eq!(codes(&found), vec!["portrait_missing".to_owned()], "{found}");
    assert_eq!(found["verdict"], "suspect", "the MRZ is valid, the portrait is not there: {found}");

    let off = Service::start(&[]).await;
    let co = off.company();
    let wf = workflow(&off, &co, "identite", None);
    let files: [(&str, &[u8], &str); 2] = [
        ("front", &silhouette, "image/png"),
        ("selfie", &face("selfies/obama.jpg"), "image/jpeg"),
    ];
    let (_, id) = complete_answering(&off, &co, &wf, "off", &files, true).await;
    let found = consultation(&off, &co, &id).await;
    let not_checked = anomaly(&found, "selfie_not_checked").unwrap_or_else(|| panic!("{found}"));
    assert!(not_checked["message"].as_str().unwrap().contains("turned off"), "{not_checked}");
    assert_eq!(found["verdict"], "conforme", "{found}");
    assert_eq!(found["decision"], "conforme", "the operator chose to compare nothing: {found}");
}
