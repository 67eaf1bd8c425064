//! The portal for client companies' teams (PORTAL.md), black-box: the real binary, its CLI, real
//! HTTP and headless Chromium. Each role's tasks in a browser, with screenshots of every step
//! under `test-artifacts/browser/<mode>/<test>/`; the security rules (throttled sign-in, CSRF,
//! cross-site posts, session expiry) over plain HTTP, where each answer can be read exactly.

use crate::support;

mod journey_settings;
mod keys_batches;
mod results;
mod roles;
mod scopes;
mod team;
mod throttle;
mod two_factor;
mod workflows;

use ring::hmac;
use support::browser::{Browser, Screen};
use support::portal::{Member, PASSWORD};
use support::Service;

/// The TOTP code of `secret` (base32, as the page shows it) for the 30 s step `step` (RFC 6238,
/// SHA-1, 6 digits), computed apart from the service's own implementation.
fn totp(secret: &str, step: u64) -> String {
    let mut bits = 0u64;
    let mut n = 0;
    let mut key = Vec::new();
    for c in secret.chars().filter(|c| *c != '=') {
        let v = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".find(c.to_ascii_uppercase()).expect("base32") as u64;
        bits = (bits << 5) | v;
        n += 5;
        if n >= 8 {
            n -= 8;
            key.push((bits >> n) as u8);
        }
    }
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, &key), &step.to_be_bytes());
    let h = tag.as_ref();
    let offset = (h[19] & 0x0f) as usize;
    let code = u32::from_be_bytes([h[offset] & 0x7f, h[offset + 1], h[offset + 2], h[offset + 3]]) % 1_000_000;
    format!("{code:06}")
}

fn step_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 30
}

const NAV: [&str; 10] = [
    "nav-dashboard",
    "nav-consultations",
    "nav-reviews",
    "nav-batches",
    "nav-workflows",
    "nav-api-keys",
    "nav-team",
    "nav-settings",
    "nav-audit",
    "nav-usage",
];

#[tokio::test]
async fn an_owner_joins_by_invitation_enrols_two_factor_and_signs_back_in_with_a_code() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let invite = svc.admin(&[
        "user",
        "invite",
        "--company",
        &co.id,
        "--email",
        "Owner@Example.fr",
        "--role",
        "owner",
    ]);
    assert_eq!(
        (invite["email"].as_str(), invite["role"].as_str()),
        (Some("owner@example.fr"), Some("owner"))
    );
    assert!(
        invite["id"].as_str().unwrap().starts_with("MBR-") && invite["expiresAt"].is_string(),
        "{invite}"
    );
    let url = invite["inviteUrl"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&format!("{}/portal/invitations/", svc.base)), "{url}");

    let b = Browser::start_with("portal_owner", svc.mode, "fr-FR", Screen::Desktop).await;
    b.client.goto(&url).await.expect("open the invitation");
    assert!(b.body_text().await.contains("owner@example.fr"));
    b.screenshot("invitation").await;
    b.fill("input[name=password]", PASSWORD).await;
    b.fill("input[name=passwordConfirm]", "another password entirely").await;
    b.click_css("main button[type=submit]").await;
    assert!(b.testid_text("flash-error").await.contains("diffèrent"), "mismatch refused");
    b.screenshot("passwords-differ").await;
    b.fill("input[name=password]", PASSWORD).await;
    b.fill("input[name=passwordConfirm]", PASSWORD).await;
    b.click_css("main button[type=submit]").await;
    assert_eq!(b.path().await, "/portal/", "signed in on the dashboard");
    for nav in NAV {
        assert_eq!(b.count(&format!("[data-testid='{nav}']")).await, 1, "an owner sees {nav}");
    }
    assert!(b.body_text().await.contains("Actes ce mois-ci"));
    b.screenshot("dashboard").await;
    // Every section of the menu, as an owner sees it: its page, accessible, in a screenshot.
    for nav in NAV {
        b.click_css(&format!("[data-testid='{nav}']")).await;
        b.assert_accessible().await;
        b.screenshot(nav).await;
    }

    // Lowering the retention asks first, on a page that says what it deletes.
    b.client.goto(&svc.url("/portal/settings")).await.unwrap();
    b.fill("input[name=retentionDays]", "0").await;
    b.click_css("[data-testid='settings-form'] button[type=submit]").await;
    assert!(b.path().await.starts_with("/portal/settings/confirm"), "{}", b.path().await);
    assert!(b.testid_text("confirm-impact").await.contains("de 30 à 0 jours"));
    b.assert_accessible().await;
    b.screenshot("settings-confirm").await;

    // The link was single use.
    b.client.goto(&url).await.unwrap();
    assert!(b.body_text().await.contains("plus valable"), "{}", b.body_text().await);
    b.client.goto(&svc.url("/portal/account")).await.unwrap();

    // Two-factor enrolment: the key as text, a code from it.
    b.assert_accessible().await;
    b.click_css("[data-testid='two-factor-enrol']").await;
    b.assert_accessible().await;
    let secret = b.testid_text("totp-secret").await;
    assert_eq!(secret.len(), 32, "{secret}");
    b.screenshot("two-factor-enrolment").await;
    b.fill("input[name=code]", "000000").await;
    b.click_css("main button[type=submit]").await;
    assert!(b.count("[data-testid='flash-error']").await == 1, "a wrong code is refused");
    let secret = b.testid_text("totp-secret").await;
    b.fill("input[name=code]", &totp(&secret, step_now())).await;
    b.click_css("main button[type=submit]").await;
    assert!(b.testid_text("flash-ok").await.contains("codes de secours"));
    assert_eq!(b.count("[data-testid='recovery-codes'] li").await, 10);
    b.screenshot("recovery-codes").await;

    // Sign out ends the session; signing in asks for a code, which must be a new one.
    b.click_css("[data-testid='sign-out']").await;
    assert_eq!(b.path().await, "/portal/login");
    assert!(b.testid_text("flash-ok").await.contains("déconnecté"));
    b.client.goto(&svc.url("/portal/")).await.unwrap();
    assert_eq!(b.path().await, "/portal/login", "no session after sign-out");
    b.fill("input[name=email]", "owner@example.fr").await;
    b.fill("input[name=password]", PASSWORD).await;
    b.click_css("main button[type=submit]").await;
    assert_eq!(b.path().await, "/portal/login/code");
    b.screenshot("second-factor").await;
    b.fill("input[name=code]", &totp(&secret, step_now() + 1)).await;
    b.click_css("main button[type=submit]").await;
    assert_eq!(b.path().await, "/portal/", "signed in with the code: {}", b.body_text().await);
    b.screenshot("signed-in-again").await;
    b.close().await;

    let audit = svc.admin(&["audit", "--company", &co.id]);
    let actions: Vec<&str> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    for action in [
        "member.invite",
        "member.invitation_accept",
        "member.two_factor_enable",
        "member.sign_in",
    ] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
    assert_eq!(audit["data"][0]["actor"], "owner@example.fr", "{audit}");
}

#[tokio::test]
async fn sign_in_answers_alike_for_unknown_accounts_and_locks_after_five_failures() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let stranger = Member::new(&svc, "nobody@example.fr");
    let unknown = stranger.sign_in(PASSWORD).await;
    let wrong = owner.sign_in("not the password at all").await;
    assert_eq!((unknown.status, wrong.status), (401, 401));
    let message = "Adresse e-mail ou mot de passe incorrect.";
    assert!(unknown.body.contains(message) && wrong.body.contains(message));
    for _ in 0..4 {
        assert_eq!(owner.sign_in("not the password at all").await.status, 401);
    }
    let locked = owner.sign_in(PASSWORD).await;
    assert_eq!(locked.status, 429, "locked even with the right password: {}", locked.body);
    assert!(locked.body.contains("Trop de tentatives"));
    // An unknown account is locked the same way: a lock reveals nothing.
    for _ in 0..5 {
        stranger.sign_in("whatever it may be").await;
    }
    assert_eq!(stranger.sign_in(PASSWORD).await.status, 429);
    // The member's session opened at joining still works; the lock is on signing in.
    assert_eq!(owner.get("/portal/").await.status, 200);
}

#[tokio::test]
async fn forms_without_their_token_or_from_another_site_are_refused() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let csrf = owner.get("/portal/account").await.field("csrf");

    let cross_site = owner
        .client
        .post(svc.url("/portal/logout"))
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status(), 403);
    let other_origin = owner
        .client
        .post(svc.url("/portal/logout"))
        .header("origin", "https://attacker.example")
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(other_origin.status(), 403);
    let no_token = owner.post("/portal/logout", &[("csrf", "forged".into())]).await;
    assert_eq!(no_token.status, 403);
    assert!(no_token.body.contains("formulaire a expiré"), "{}", no_token.body);
    assert_eq!(owner.get("/portal/").await.status, 200, "still signed in after refused sign-outs");

    // The sign-in form's token is the browser's own cookie: a page of another site has neither.
    let forged = Member::new(&svc, "owner@example.fr");
    let page = forged
        .post(
            "/portal/login",
            &[
                ("formToken", "x".repeat(43)),
                ("email", "owner@example.fr".into()),
                ("password", PASSWORD.into()),
            ],
        )
        .await;
    assert_eq!(page.status, 403);

    let same_origin = owner.submit("/portal/account", "/portal/logout", &[]).await;
    assert_eq!(
        (same_origin.status, same_origin.location.as_deref()),
        (303, Some("/portal/login?flash=signed_out"))
    );
    assert_eq!(owner.get("/portal/").await.location.as_deref(), Some("/portal/login"));
}

#[tokio::test]
async fn pages_carry_a_strict_policy_and_sessions_end_when_idle() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let page = owner.get("/portal/").await;
    assert_eq!(page.status, 200);
    let header = |name: &str| page.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(
        header("content-security-policy").contains("default-src 'none'")
            && header("content-security-policy").contains("frame-ancestors 'none'")
    );
    assert_eq!(header("cache-control"), "no-store");
    assert!(!page.body.contains("<script"), "no script on the dashboard");

    // The session cookie: HttpOnly, SameSite=Lax, and its value is not what the database keeps.
    let login = Member::new(&svc, "owner@example.fr");
    let signed = login.sign_in(PASSWORD).await;
    let cookie = signed
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("sceau_session="))
        .expect("a session cookie")
        .to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"),
        "{cookie}"
    );
    let secret = cookie.trim_start_matches("sceau_session=").split(';').next().unwrap().to_owned();
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).expect("open the database");
    let stored: Vec<Vec<u8>> = db
        .prepare("SELECT token_hash FROM portal_sessions")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(stored
        .iter()
        .all(|h| h.len() == 32 && !h.windows(8).any(|w| secret.as_bytes().windows(8).any(|s| s == w))));

    // 31 minutes without a visit: the session is over.
    assert_eq!(login.get("/portal/").await.status, 200);
    db.execute(
        "UPDATE portal_sessions SET last_seen_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-31 minutes')",
        [],
    )
    .unwrap();
    let idle = login.get("/portal/").await;
    assert_eq!((idle.status, idle.location.as_deref()), (303, Some("/portal/login")));
}

#[tokio::test]
async fn a_member_changes_their_password_and_revokes_their_other_sessions() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let laptop = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let phone = Member::new(&svc, "owner@example.fr");
    assert_eq!(phone.sign_in(PASSWORD).await.location.as_deref(), Some("/portal/"));
    let tablet = Member::new(&svc, "owner@example.fr");
    assert_eq!(tablet.sign_in(PASSWORD).await.location.as_deref(), Some("/portal/"));

    // Three sessions listed; the phone's revoked from the laptop.
    let account = laptop.get("/portal/account").await;
    assert_eq!(account.body.matches("data-testid=\"session-row\"").count(), 3);
    let phone_id = {
        let page = phone.get("/portal/account").await;
        assert!(page.body.contains("cette session"));
        // The phone's own row has no revoke form; the laptop sees it with one. Find the phone's id
        // as the one id the phone's page does not offer to revoke.
        let ids = |body: &str| -> Vec<String> {
            body.match_indices("/portal/account/sessions/")
                .map(|(i, _)| body[i + 25..i + 46].to_owned())
                .collect()
        };
        let from_laptop = ids(&account.body);
        let from_phone = ids(&page.body);
        from_laptop
            .into_iter()
            .find(|id| !from_phone.contains(id))
            .expect("the phone's session id")
    };
    let revoked = laptop
        .submit("/portal/account", &format!("/portal/account/sessions/{phone_id}/revoke"), &[])
        .await;
    assert_eq!(revoked.location.as_deref(), Some("/portal/account?flash=revoked"));
    assert_eq!(
        phone.get("/portal/").await.location.as_deref(),
        Some("/portal/login"),
        "the phone is signed out"
    );
    assert_eq!(tablet.get("/portal/").await.status, 200);

    // A wrong current password changes nothing; the right one ends the other sessions.
    let new = "another long passphrase";
    let refused = laptop
        .submit(
            "/portal/account",
            "/portal/account/password",
            &[("currentPassword", "wrong one"), ("password", new), ("passwordConfirm", new)],
        )
        .await;
    assert_eq!(refused.status, 422);
    let short = laptop
        .submit(
            "/portal/account",
            "/portal/account/password",
            &[("currentPassword", PASSWORD), ("password", "short"), ("passwordConfirm", "short")],
        )
        .await;
    assert_eq!(short.status, 422);
    let changed = laptop
        .submit(
            "/portal/account",
            "/portal/account/password",
            &[("currentPassword", PASSWORD), ("password", new), ("passwordConfirm", new)],
        )
        .await;
    assert_eq!(changed.location.as_deref(), Some("/portal/account?flash=password"));
    assert_eq!(laptop.get("/portal/").await.status, 200, "this session stays");
    assert_eq!(
        tablet.get("/portal/").await.location.as_deref(),
        Some("/portal/login"),
        "the others end"
    );
    assert_eq!(tablet.sign_in(PASSWORD).await.status, 401, "the old password is gone");
    assert_eq!(tablet.sign_in(new).await.location.as_deref(), Some("/portal/"));
}
