//! Guessing at once: the sign-in throttle counts an attempt before its check, so concurrent wrong
//! passwords or codes get no more checks than the threshold (5 per account), wherever a secret is
//! asked (sign-in, its second factor, password change, two-factor removal); and a flood of sign-ins
//! from one address neither swells the gateway nor slows another company's API, since argon2
//! runs on a small pool of its own. How many argon2 runs there were is read on `/metrics`.

use super::{step_now, totp};
use crate::support::portal::{Member, PASSWORD};
use crate::support::Service;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Argon2 runs of `kind` (`verify` or `hash`) the gateway has counted.
pub(crate) async fn hashes(svc: &Service, kind: &str) -> u64 {
    let text = svc
        .http
        .get(format!("{}/metrics", svc.metrics_base))
        .send()
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("the metrics");
    let label = format!("kind=\"{kind}\"");
    text.lines()
        .find(|l| l.starts_with("sceau_password_hashes_total{") && l.contains(&label))
        .and_then(|l| l.rsplit(' ').next())
        .map_or(0, |v| v.parse().expect("a count"))
}

/// Posts `fields` to `path` `n` times at once from `member`'s browser; how many got each status.
/// Every 429 and 503 must say when to come back.
pub(crate) async fn posted_at_once(member: &Member, path: &str, fields: &[(&'static str, String)], n: usize) -> BTreeMap<u16, usize> {
    let mut requests = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (client, url, fields) = (member.client.clone(), format!("{}{path}", member.base), fields.to_vec());
        requests.spawn(async move {
            let r = client.post(url).form(&fields).send().await.expect("POST");
            let status = r.status().as_u16();
            if matches!(status, 429 | 503) {
                assert!(r.headers().contains_key("retry-after"), "{status} without Retry-After");
            }
            status
        });
    }
    let mut statuses = BTreeMap::new();
    while let Some(status) = requests.join_next().await {
        *statuses.entry(status.expect("a request")).or_default() += 1;
    }
    statuses
}

/// Sixty concurrent guesses answered `wrong` (the check ran) or 429: at most five checks, as
/// many argon2 verifications as `wrong` answers (`verified` of them, from the metrics).
pub(crate) fn assert_five_checks_at_most(what: &str, statuses: &BTreeMap<u16, usize>, wrong: u16, verified: Option<u64>) {
    let checked = statuses.get(&wrong).copied().unwrap_or(0);
    assert!((1..=5).contains(&checked), "{what}: {statuses:?}");
    assert_eq!(statuses.get(&429).copied().unwrap_or(0), 60 - checked, "{what}: {statuses:?}");
    if let Some(verified) = verified {
        assert_eq!(verified, checked as u64, "{what}: argon2 ran {verified} times for {statuses:?}");
    }
}

/// A member of `company` who enrolled a second factor, signed in; the factor's secret.
async fn with_two_factor(svc: &Service, company: &str, email: &str) -> (Member, String) {
    let member = Member::joined(svc, company, email, "admin").await;
    let page = member.get("/portal/account/two-factor").await;
    let marker = "data-testid=\"totp-secret\">";
    let start = page.body.find(marker).expect("the secret on the page") + marker.len();
    let secret = page.body[start..].split('<').next().expect("the secret").to_owned();
    let enrolled = member
        .post(
            "/portal/account/two-factor",
            &[
                ("csrf", page.field("csrf")),
                ("enrolment", page.field("enrolment")),
                ("code", totp(&secret, step_now())),
            ],
        )
        .await;
    assert_eq!(enrolled.status, 200, "{}", enrolled.body);
    assert!(enrolled.body.contains("data-testid=\"recovery-codes\""));
    (member, secret)
}

#[tokio::test]
async fn sixty_concurrent_wrong_passwords_get_at_most_five_checks() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let admin = Member::joined(&svc, &co.id, "admin@example.fr", "admin").await;
    let (enrolled, _) = with_two_factor(&svc, &co.id, "second@example.fr").await;

    // Sign-in: one account, from a browser of its own.
    let guesser = Member::new(&svc, "owner@example.fr");
    let token = guesser.get("/portal/login").await.field("formToken");
    let fields = [
        ("formToken", token),
        ("email", "owner@example.fr".to_owned()),
        ("password", "not the password at all".to_owned()),
    ];
    let before = hashes(&svc, "verify").await;
    let statuses = posted_at_once(&guesser, "/portal/login", &fields, 60).await;
    let verified = hashes(&svc, "verify").await - before;
    assert_five_checks_at_most("sign-in", &statuses, 401, Some(verified));
    assert_eq!(
        guesser.sign_in(PASSWORD).await.status,
        429,
        "the account is locked, even to its password"
    );

    // Password change: the current password, asked of a signed-in member.
    let csrf = admin.get("/portal/account").await.field("csrf");
    let fields = [
        ("csrf", csrf),
        ("currentPassword", "not the password at all".to_owned()),
        ("password", "another long passphrase".to_owned()),
        ("passwordConfirm", "another long passphrase".to_owned()),
    ];
    let before = hashes(&svc, "verify").await;
    let statuses = posted_at_once(&admin, "/portal/account/password", &fields, 60).await;
    let verified = hashes(&svc, "verify").await - before;
    assert_five_checks_at_most("password change", &statuses, 422, Some(verified));
    let locked = admin
        .submit(
            "/portal/account",
            "/portal/account/password",
            &[
                ("currentPassword", PASSWORD),
                ("password", "another long passphrase"),
                ("passwordConfirm", "another long passphrase"),
            ],
        )
        .await;
    assert_eq!(locked.status, 429, "locked, even with the right password");
    assert!(locked.body.contains("Trop de tentatives"), "{}", locked.body);

    // Two-factor removal: the current password again.
    let csrf = enrolled.get("/portal/account").await.field("csrf");
    let fields = [
        ("csrf", csrf),
        ("currentPassword", "not the password at all".to_owned()),
        ("currentCode", "000000".to_owned()),
    ];
    let before = hashes(&svc, "verify").await;
    let statuses = posted_at_once(&enrolled, "/portal/account/two-factor/disable", &fields, 60).await;
    let verified = hashes(&svc, "verify").await - before;
    assert_five_checks_at_most("two-factor removal", &statuses, 422, Some(verified));
    let account = enrolled.get("/portal/account").await;
    assert!(
        account.body.contains("/portal/account/two-factor/disable"),
        "the second factor is still on: {}",
        account.body
    );
    assert_eq!(owner.get("/portal/").await.status, 200, "sessions already open stay open");
}

#[tokio::test]
async fn sixty_concurrent_wrong_codes_get_at_most_five_checks() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let (_, secret) = with_two_factor(&svc, &co.id, "owner@example.fr").await;
    let browser = Member::new(&svc, "owner@example.fr");
    let signed = browser.sign_in(PASSWORD).await;
    assert_eq!(signed.location.as_deref(), Some("/portal/login/code"), "{}", signed.body);
    let csrf = browser.get("/portal/login/code").await.field("csrf");
    // A code no step near now has.
    let near: Vec<String> = (step_now() - 2..=step_now() + 2).map(|s| totp(&secret, s)).collect();
    let wrong = ["000000", "111111", "222222", "333333", "444444", "555555"]
        .into_iter()
        .find(|c| !near.iter().any(|n| n == c))
        .expect("a wrong code");
    let fields = [("csrf", csrf.clone()), ("code", wrong.to_owned())];
    let statuses = posted_at_once(&browser, "/portal/login/code", &fields, 60).await;
    assert_five_checks_at_most("second factor", &statuses, 401, None);
    let right = browser
        .post("/portal/login/code", &[("csrf", csrf), ("code", totp(&secret, step_now()))])
        .await;
    assert_eq!(right.status, 429, "locked, even to the right code");
}

/// 250 sign-ins at once from one address, each with an e-mail of its own: the gateway stays under
/// 300 MB and another company's API (from another address) answers within 100 ms at the 95th
/// percentile meanwhile. Past its 128 connections the flooding address's newest are closed at the
/// door (`server::admission`), counted as status 0.
#[tokio::test]
async fn a_flood_of_sign_ins_neither_swells_the_gateway_nor_slows_another_company() {
    let svc = Service::start(&[]).await;
    let other = svc.company();
    let gateway = svc
        .pids()
        .into_iter()
        .find(|(role, _)| role == "serve" || role == "gateway")
        .map(|(_, pid)| pid)
        .expect("the gateway's process");
    let (status, _) = svc.get(&other.key, "/api/v1/workflows").await;
    assert_eq!(status, 200);
    let resting_mb = peak_rss_kb(gateway) / 1024;

    let flood = Member::new(&svc, "flood@example.fr");
    let token = flood.get("/portal/login").await.field("formToken");
    let before = hashes(&svc, "verify").await;
    let api = {
        let http = reqwest::Client::builder()
            .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
            .build()
            .expect("a client of another address");
        let (url, key) = (svc.url("/api/v1/workflows"), other.key.clone());
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let task = tokio::spawn(async move {
            let mut latencies = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let start = Instant::now();
                let r = http.get(&url).bearer_auth(&key).send().await.expect("GET /api/v1/workflows");
                assert_eq!(r.status(), 200);
                let _ = r.bytes().await;
                latencies.push(start.elapsed());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            latencies
        });
        (done, task)
    };
    let started = Instant::now();
    let mut requests = tokio::task::JoinSet::new();
    for i in 0..250 {
        let (client, url) = (flood.client.clone(), svc.url("/portal/login"));
        let fields = [
            ("formToken", token.clone()),
            ("email", format!("flood{i}@example.fr")),
            ("password", format!("guess number {i} of many")),
        ];
        requests.spawn(async move { client.post(url).form(&fields).send().await.map_or(0, |r| r.status().as_u16()) });
    }
    let mut statuses = BTreeMap::<u16, usize>::new();
    while let Some(status) = requests.join_next().await {
        *statuses.entry(status.expect("a sign-in")).or_default() += 1;
    }
    let flood_took = started.elapsed();
    api.0.store(true, std::sync::atomic::Ordering::Release);
    let mut latencies = api.1.await.expect("the other company's requests");
    let peak_mb = peak_rss_kb(gateway) / 1024;
    let verified = hashes(&svc, "verify").await - before;

    latencies.sort();
    let p95 = latencies[latencies.len() * 95 / 100];
    println!(
        "flood of 250 sign-ins: {flood_took:?}, {statuses:?}, {verified} argon2 checks; gateway peak {resting_mb} MB before, {peak_mb} MB after; \
         other company's API: {} requests, p50 {:?}, p95 {p95:?}, max {:?}",
        latencies.len(),
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
    assert!(statuses.keys().all(|s| [0, 401, 429, 503].contains(s)), "{statuses:?}");
    assert!(
        statuses.get(&0).copied().unwrap_or(0) <= 250 - 128,
        "closed at the door: {statuses:?}"
    );
    assert!(verified <= 20, "one address gets 20 checks, not {verified}");
    assert!(latencies.len() >= 10, "only {} requests during the flood", latencies.len());
    assert!(peak_mb < 300, "the gateway reached {peak_mb} MB");
    assert!(p95 < Duration::from_millis(100), "p95 {p95:?}");
}

/// The most resident memory `pid` has had (`VmHWM`), in kB.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process's status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}
