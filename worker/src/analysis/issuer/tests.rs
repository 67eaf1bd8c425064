//! Register tests: the shipped register, the operator's file, and the online adapter against a
//! real HTTP server on the loopback interface.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};

use super::*;

/// The fictitious issuers of the samples, as the acceptance tests register them.
const DEMO_ISSUERS: &str = "\
# siren\tname\tkind\tsource
789012341\tEAUX DE DÉMONSTRATION\twater\ttest fixture
890123458\tDEMO CONSEIL SAS\tpayroll\ttest fixture
901234567\tELECTRICITE DEMO\tenergy\ttest fixture
";

/// A file in the temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(content: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "sceau-issuers-{}-{}.tsv",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, content).unwrap();
        Self(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn offline(extra_file: Option<PathBuf>) -> IssuerRegister {
    IssuerRegister::build(&RegisterOptions {
        extra_file,
        online_url: None,
        online_timeout: Duration::from_secs(1),
    })
    .unwrap()
}

fn online(url: String, timeout: Duration) -> IssuerRegister {
    IssuerRegister::build(&RegisterOptions {
        extra_file: None,
        online_url: Some(url),
        online_timeout: timeout,
    })
    .unwrap()
}

/// The line of the sample bill without a seal that names its issuer.
const SAMPLE_BILL: &str = "EAUX DE DÉMONSTRATION\nRégie - SIRET 78901234100010\nFacture n° E2026110077\nTVA 20 % 6,44 €";

#[test]
fn the_register_is_shareable() {
    fn shareable<T: Send + Sync>() {}
    shareable::<IssuerRegister>();
}

#[tokio::test]
async fn shipped_issuers_are_confirmed_offline() {
    let register = offline(None);
    assert!(register.len() >= 60);
    let check = register
        .confirm("ELECTRICITE DE FRANCE SA au capital de … – 552 081 317 R.C.S. Paris – TVA FR03552081317")
        .await;
    assert_eq!(check.found, [Siren::parse("552081317").unwrap()]);
    assert!(check.invalid.is_empty());
    let issuer = check.confirmed.unwrap();
    assert_eq!(
        (issuer.name.as_str(), issuer.source),
        ("ELECTRICITE DE FRANCE", IssuerSource::Offline)
    );

    // A La Poste establishment's SIRET follows its own rule.
    let la_poste = register.confirm("La Poste - SIRET 356 000 000 00010").await;
    assert_eq!(la_poste.confirmed.map(|i| i.name), Some("LA POSTE".to_owned()));
}

#[tokio::test]
async fn demo_issuers_need_the_extra_file() {
    let check = offline(None).confirm(SAMPLE_BILL).await;
    assert_eq!(check.found, [Siren::parse("789012341").unwrap()]);
    assert_eq!(check.confirmed, None);

    let file = TempFile::new(DEMO_ISSUERS);
    let register = offline(Some(file.0.clone()));
    assert_eq!(register.len(), offline(None).len() + 3);
    let issuer = register.confirm(SAMPLE_BILL).await.confirmed.unwrap();
    assert_eq!(issuer.name, "EAUX DE DÉMONSTRATION");
    assert_eq!(issuer.source, IssuerSource::Offline);
    let payslip = register.confirm("Employeur : DEMO CONSEIL SAS - SIRET 89012345800014").await;
    assert_eq!(payslip.confirmed.map(|i| i.name), Some("DEMO CONSEIL SAS".to_owned()));
    let third = register.confirm("SIRET 90123456700013").await;
    assert_eq!(third.confirmed.map(|i| i.siren.to_string()), Some("901234567".to_owned()));
}

#[tokio::test]
async fn the_extra_file_overrides_shipped_rows() {
    let file = TempFile::new("552081317\tEDF (OPERATOR NAME)\tenergy\toperator\n");
    let register = offline(Some(file.0.clone()));
    assert_eq!(register.len(), offline(None).len());
    let issuer = register.confirm("SIREN 552081317").await.confirmed.unwrap();
    assert_eq!(issuer.name, "EDF (OPERATOR NAME)");
}

#[test]
fn bad_extra_files_stop_the_build() {
    let missing = std::env::temp_dir().join("sceau-no-such-register.tsv");
    let error = IssuerRegister::build(&RegisterOptions {
        extra_file: Some(missing),
        online_url: None,
        online_timeout: Duration::from_secs(1),
    })
    .unwrap_err();
    assert!(matches!(error, RegisterError::Read { .. }), "{error}");

    let file = TempFile::new("# fine\n789012341\tEAUX\twater\tfixture\n789012342\tSECRET NAME\twater\tfixture\n");
    let error = IssuerRegister::build(&RegisterOptions {
        extra_file: Some(file.0.clone()),
        online_url: None,
        online_timeout: Duration::from_secs(1),
    })
    .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, RegisterError::Parse { line: 3, .. }), "{message}");
    assert!(message.contains("check digit") && !message.contains("SECRET"), "{message}");
}

#[tokio::test]
async fn invalid_labelled_numbers_are_counted() {
    let check = offline(None)
        .confirm("Fournisseur X - SIRET 552 081 317 66523 - SIREN 123456789")
        .await;
    assert!(check.found.is_empty());
    assert_eq!(check.invalid, [IdentifierKind::Siret, IdentifierKind::Siren]);
    assert_eq!(check.confirmed, None);
    let nothing = offline(None).confirm("").await;
    assert_eq!(nothing, IssuerCheck::default());
}

#[test]
fn online_urls_are_checked() {
    for bad in ["not a url", "ftp://example.org", "https://example.org/?q=1"] {
        let error = IssuerRegister::build(&RegisterOptions {
            extra_file: None,
            online_url: Some(bad.to_owned()),
            online_timeout: Duration::from_secs(1),
        })
        .unwrap_err();
        assert!(matches!(error, RegisterError::OnlineUrl(_)), "{bad}: {error}");
    }
}

// ---------------------------------------------------------------------------------------------
// Online register

type Hits = Arc<AtomicUsize>;

async fn search(State(hits): State<Hits>, Query(query): Query<HashMap<String, String>>) -> Json<serde_json::Value> {
    hits.fetch_add(1, Ordering::SeqCst);
    let q = query.get("q").map(String::as_str).unwrap_or_default();
    let other = serde_json::json!({"siren": "552081317", "nom_complet": "ELECTRICITE DE FRANCE", "etat_administratif": "A"});
    let results = match q {
        "789012341" => vec![
            other,
            serde_json::json!({"siren": "789012341", "nom_complet": "EAUX DE DEMONSTRATION", "etat_administratif": "A"}),
        ],
        "890123458" => vec![serde_json::json!({"siren": "890123458", "nom_complet": "DEMO CONSEIL SAS", "etat_administratif": "C"})],
        // A search that matches other companies but not this SIREN.
        _ => vec![other],
    };
    Json(serde_json::json!({ "results": results, "total_results": 1, "page": 1 }))
}

/// A company search on 127.0.0.1, with a failing and a slow variant under `/error` and `/slow`.
async fn serve() -> (String, Hits) {
    let hits: Hits = Arc::default();
    let app = Router::new()
        .route("/search", get(search))
        .route("/error/search", get(|| async { StatusCode::INTERNAL_SERVER_ERROR }))
        .route("/garbage/search", get(|| async { "<html>not json</html>" }))
        .route(
            "/slow/search",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "{}"
            }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{address}"), hits)
}

#[tokio::test]
async fn online_confirms_an_active_company() {
    let (url, hits) = serve().await;
    let register = online(format!("{url}/"), Duration::from_secs(2));
    let check = register.confirm(SAMPLE_BILL).await;
    let issuer = check.confirmed.unwrap();
    assert_eq!(issuer.siren.as_str(), "789012341");
    assert_eq!(issuer.name, "EAUX DE DEMONSTRATION");
    assert_eq!(issuer.source, IssuerSource::Online);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    // The answer is cached.
    assert!(register.confirm(SAMPLE_BILL).await.confirmed.is_some());
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn online_refuses_closed_and_unknown_companies() {
    let (url, hits) = serve().await;
    let register = online(url, Duration::from_secs(2));
    let closed = register.confirm("Employeur : DEMO CONSEIL SAS - SIRET 89012345800014").await;
    assert_eq!(closed.found.len(), 1);
    assert_eq!(closed.confirmed, None);
    let unknown = register.confirm("SIRET 90123456700013").await;
    assert_eq!(unknown.confirmed, None);
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn online_is_not_asked_about_unlabelled_or_known_numbers() {
    let (url, hits) = serve().await;
    let register = online(url, Duration::from_secs(2));
    // Nine digits passing Luhn, but nothing says they are a company number.
    assert_eq!(register.confirm("Contrat 789012341").await.confirmed, None);
    // Known offline: no request.
    let edf = register.confirm("SIREN 552 081 317").await.confirmed.unwrap();
    assert_eq!(edf.source, IssuerSource::Offline);
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn online_failures_mean_not_confirmed() {
    let (url, hits) = serve().await;
    for path in ["/error", "/garbage"] {
        let register = online(format!("{url}{path}"), Duration::from_secs(2));
        assert_eq!(register.confirm(SAMPLE_BILL).await.confirmed, None, "{path}");
    }
    let slow = online(format!("{url}/slow"), Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(slow.confirm(SAMPLE_BILL).await.confirmed, None);
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // Nothing listens on a port just released.
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let unreachable = online(format!("http://127.0.0.1:{closed_port}"), Duration::from_secs(1));
    assert_eq!(unreachable.confirm(SAMPLE_BILL).await.confirmed, None);
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the error routes do not count");
}

#[tokio::test]
async fn online_failures_are_not_cached() {
    let (url, hits) = serve().await;
    let register = online(format!("{url}/error"), Duration::from_secs(2));
    let online = register.online.as_ref().unwrap();
    let siren = Siren::parse("789012341").unwrap();
    assert_eq!(online.lookup(&siren).await, OnlineAnswer::Unavailable);
    assert!(online.cache.lock().unwrap().is_empty());
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}
