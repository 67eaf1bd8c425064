//! The second factor after its enrolment (issue 28, item 10): replacing it asks for the current
//! password, counted under the sign-in throttle like every current password, and a code of the
//! factor it replaces; the secret an enrolment page shows is good for ten minutes; recovery codes
//! are stored keyed with a server key, so the database alone tests no candidate, and the codes an
//! earlier version stored still sign in after the upgrade.

use super::throttle::{assert_five_checks_at_most, hashes, posted_at_once};
use super::{step_now, totp};
use crate::support::portal::{Member, Page, PASSWORD};
use crate::support::Service;
use base64::Engine;
use common::crypto::envelope::MasterKeys;
use common::crypto::totp::TotpSecret;
use domain::ids::MemberId;
use ring::digest::{digest, SHA256};

const ENROL: &str = "/portal/account/two-factor";

/// The key an enrolment page shows.
fn secret_of(page: &Page) -> String {
    let marker = "data-testid=\"totp-secret\">";
    let start = page
        .body
        .find(marker)
        .unwrap_or_else(|| panic!("no key on the page: {}", page.body))
        + marker.len();
    page.body[start..].split('<').next().expect("the key").to_owned()
}

/// The recovery codes a page shows once.
fn codes_of(page: &Page) -> Vec<String> {
    let start = page.body.find("data-testid=\"recovery-codes\"").expect("the recovery codes");
    let list = &page.body[start..page.body[start..].find("</ul>").expect("their end") + start];
    list.split("<code>")
        .skip(1)
        .map(|c| c.split('<').next().unwrap().to_owned())
        .collect()
}

/// Posts the enrolment form of `page` with the code of `secret` now, and `extra` fields.
async fn confirm(member: &Member, page: &Page, secret: &str, extra: &[(&'static str, String)]) -> Page {
    let mut fields = vec![
        ("csrf", page.field("csrf")),
        ("enrolment", page.field("enrolment")),
        ("code", totp(secret, step_now())),
    ];
    fields.extend_from_slice(extra);
    member.post(ENROL, &fields).await
}

/// A member of a fresh company who enrolled a second factor: the member, its key, its codes.
async fn enrolled(svc: &Service) -> (Member, String, Vec<String>) {
    let co = svc.company();
    let member = Member::joined(svc, &co.id, "owner@example.fr", "owner").await;
    let page = member.get(ENROL).await;
    let secret = secret_of(&page);
    let done = confirm(&member, &page, &secret, &[]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    let codes = codes_of(&done);
    assert_eq!(codes.len(), 10);
    (member, secret, codes)
}

/// The second-factor step of a fresh sign-in with `code`: where it led (`None` when refused).
async fn sign_in_with(svc: &Service, code: &str) -> Option<String> {
    let browser = Member::new(svc, "owner@example.fr");
    let signed = browser.sign_in(PASSWORD).await;
    assert_eq!(signed.location.as_deref(), Some("/portal/login/code"), "{}", signed.body);
    let csrf = browser.get("/portal/login/code").await.field("csrf");
    let answered = browser
        .post("/portal/login/code", &[("csrf", csrf), ("code", code.to_owned())])
        .await;
    answered.location
}

#[tokio::test]
async fn replacing_a_second_factor_needs_the_password_and_a_current_code() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let member = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    // An enrolment page kept from before the member enrolled (by a stolen session, say).
    let kept = member.get(ENROL).await;
    let first = member.get(ENROL).await;
    let s1 = secret_of(&first);
    let done = confirm(&member, &first, &s1, &[]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    let codes1 = codes_of(&done);

    // The kept page, confirmed without the password and a current code, replaces nothing.
    let s0 = secret_of(&kept);
    let stolen = confirm(&member, &kept, &s0, &[]).await;
    assert_eq!(stolen.status, 422, "{}", stolen.body);
    assert!(!stolen.body.contains("recovery-codes"), "{}", stolen.body);

    // Another session of the member's, signed in with the current factor.
    let other = Member::new(&svc, "owner@example.fr");
    assert_eq!(other.sign_in(PASSWORD).await.location.as_deref(), Some("/portal/login/code"));
    let csrf = other.get("/portal/login/code").await.field("csrf");
    let answered = other
        .post("/portal/login/code", &[("csrf", csrf), ("code", codes1[2].clone())])
        .await;
    assert_eq!(answered.location.as_deref(), Some("/portal/"));

    // The enrolment page of a member with a factor asks for both.
    let page = member.get(ENROL).await;
    assert_eq!(page.status, 200);
    for asked in [
        "data-testid=\"two-factor-replace\"",
        "name=\"currentPassword\"",
        "name=\"currentCode\"",
    ] {
        assert!(page.body.contains(asked), "{asked}: {}", page.body);
    }
    let s2 = secret_of(&page);
    let wrong_password = confirm(
        &member,
        &page,
        &s2,
        &[
            ("currentPassword", "not the password at all".into()),
            ("currentCode", totp(&s1, step_now() + 1)),
        ],
    )
    .await;
    assert_eq!(wrong_password.status, 422, "{}", wrong_password.body);
    assert!(wrong_password.body.contains("Mot de passe actuel ou code actuel incorrect."));
    let wrong_code = confirm(
        &member,
        &page,
        &s2,
        &[("currentPassword", PASSWORD.into()), ("currentCode", totp(&s0, step_now()))],
    )
    .await;
    assert_eq!(wrong_code.status, 422, "{}", wrong_code.body);
    assert!(wrong_code.body.contains("Mot de passe actuel ou code actuel incorrect."));
    assert!(!wrong_code.body.contains("recovery-codes"));

    // The password and a recovery code of the current factor: replaced, new codes shown.
    let replaced = confirm(
        &member,
        &page,
        &s2,
        &[("currentPassword", PASSWORD.into()), ("currentCode", codes1[0].to_uppercase())],
    )
    .await;
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    let codes2 = codes_of(&replaced);
    assert_eq!(codes2.len(), 10);
    // As a password change does, the replacement ends the member's other sessions, not this one.
    let ended = other.get("/portal/").await;
    assert_eq!((ended.status, ended.location.as_deref()), (303, Some("/portal/login")));
    assert_eq!(member.get("/portal/").await.status, 200);

    // Only the new factor signs in now: not the old key, not the old codes.
    assert_eq!(sign_in_with(&svc, &totp(&s1, step_now() + 1)).await, None);
    assert_eq!(sign_in_with(&svc, &codes1[1]).await, None);
    assert_eq!(sign_in_with(&svc, &totp(&s2, step_now() + 1)).await.as_deref(), Some("/portal/"));
}

/// Removing the factor asks what replacing it asks, the password and a current code: else a
/// stolen session with the password would remove it, then enrol its own as a first enrolment.
#[tokio::test]
async fn removing_a_second_factor_needs_the_password_and_a_current_code() {
    let svc = Service::start(&[]).await;
    let (member, _, codes) = enrolled(&svc).await;
    let remove = |fields: Vec<(&'static str, String)>| {
        let member = &member;
        async move {
            let csrf = member.get("/portal/account").await.field("csrf");
            let mut all = vec![("csrf", csrf)];
            all.extend(fields);
            member.post("/portal/account/two-factor/disable", &all).await
        }
    };
    let password_only = remove(vec![("currentPassword", PASSWORD.into())]).await;
    assert_eq!(password_only.status, 422, "{}", password_only.body);
    let wrong_code = remove(vec![("currentPassword", PASSWORD.into()), ("currentCode", "000000".into())]).await;
    assert_eq!(wrong_code.status, 422, "{}", wrong_code.body);
    assert!(wrong_code.body.contains("Mot de passe actuel ou code actuel incorrect."));
    let account = member.get("/portal/account").await;
    assert!(
        account.body.contains("name=\"currentCode\""),
        "the form asks for a code: {}",
        account.body
    );
    assert!(account.body.contains("two-factor/disable"), "still on: {}", account.body);

    let removed = remove(vec![("currentPassword", PASSWORD.into()), ("currentCode", codes[0].clone())]).await;
    assert_eq!(
        removed.location.as_deref(),
        Some("/portal/account?flash=two_factor_off"),
        "{}",
        removed.body
    );
    assert!(member
        .get("/portal/account")
        .await
        .body
        .contains("data-testid=\"two-factor-enrol\""));
    // Signing in no longer asks for a code.
    let fresh = Member::new(&svc, "owner@example.fr");
    assert_eq!(fresh.sign_in(PASSWORD).await.location.as_deref(), Some("/portal/"));
}

#[tokio::test]
async fn sixty_concurrent_replacements_with_a_wrong_password_get_at_most_five_checks() {
    let svc = Service::start(&[]).await;
    let (member, s1, _) = enrolled(&svc).await;
    let page = member.get(ENROL).await;
    let s2 = secret_of(&page);
    let fields = [
        ("csrf", page.field("csrf")),
        ("enrolment", page.field("enrolment")),
        ("code", totp(&s2, step_now())),
        ("currentPassword", "not the password at all".to_owned()),
        ("currentCode", totp(&s1, step_now() + 1)),
    ];
    let before = hashes(&svc, "verify").await;
    let statuses = posted_at_once(&member, ENROL, &fields, 60).await;
    let verified = hashes(&svc, "verify").await - before;
    assert_five_checks_at_most("two-factor replacement", &statuses, 422, Some(verified));
}

/// The enrolment form of `member` as a page would have shown it `age` ago, sealed as the service
/// seals it (with its master key); the secret in it.
fn form_of_age(svc: &Service, member: &MemberId, age: chrono::Duration) -> (String, String) {
    let keys = MasterKeys::open_existing(&svc.master_key_path()).expect("the master key");
    let secret = TotpSecret::generate();
    let sealed = common::membership::seal_enrolment(&keys, member, &secret, chrono::Utc::now() - age);
    (base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sealed), secret.base32())
}

#[tokio::test]
async fn an_enrolment_page_is_good_for_ten_minutes() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let member = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let list = svc.admin(&["user", "list", "--company", &co.id]);
    let id: MemberId = list["data"][0]["id"].as_str().unwrap().parse().unwrap();
    let csrf = member.get(ENROL).await.field("csrf");

    let (stale, secret) = form_of_age(&svc, &id, chrono::Duration::minutes(11));
    let fields = [("csrf", csrf.clone()), ("enrolment", stale), ("code", totp(&secret, step_now()))];
    let refused = member.post(ENROL, &fields).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("Cette clé a expiré"), "{}", refused.body);
    assert!(!refused.body.contains("recovery-codes"));
    assert_ne!(secret_of(&refused), secret, "a new key to start again with");

    let (recent, secret) = form_of_age(&svc, &id, chrono::Duration::minutes(9));
    let fields = [("csrf", csrf), ("enrolment", recent), ("code", totp(&secret, step_now()))];
    let accepted = member.post(ENROL, &fields).await;
    assert_eq!(accepted.status, 200, "{}", accepted.body);
    assert_eq!(codes_of(&accepted).len(), 10);
}

/// A value of the member `email`'s row, as the database holds it.
fn column_of(svc: &Service, email: &str, column: &str) -> Option<String> {
    let db = rusqlite::Connection::open_with_flags(svc.data_dir().join("sceau.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("the database");
    db.query_row(&format!("SELECT {column} FROM members WHERE email = ?1"), [email], |r| r.get(0))
        .expect("the member")
}

/// The recovery codes of `email` as the database holds them (hex strings).
fn stored_codes(svc: &Service, email: &str) -> Vec<String> {
    column_of(svc, email, "recovery_codes").map_or_else(Vec::new, |k| serde_json::from_str(&k).unwrap())
}

/// The bare SHA-256 of a code (normalised as the service reads it), in hex: what was stored before.
fn sha256_hex(code: &str) -> String {
    let normal: String = code.chars().filter(|c| *c != '-').collect::<String>().to_lowercase();
    digest(&SHA256, normal.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn recovery_codes_are_stored_keyed_and_codes_stored_before_still_sign_in() {
    let mut svc = Service::start(&[]).await;
    let (_, _, codes) = enrolled(&svc).await;
    let stored = stored_codes(&svc, "owner@example.fr");
    assert_eq!(stored.len(), 10);
    for code in &codes {
        assert!(
            !stored.contains(&sha256_hex(code)),
            "{code} is stored as its bare SHA-256: a dump tests it"
        );
    }
    assert_eq!(
        sign_in_with(&svc, &format!(" {} ", codes[0].to_uppercase())).await.as_deref(),
        Some("/portal/")
    );
    assert_eq!(sign_in_with(&svc, &codes[0]).await, None, "spent");

    // The database of an earlier version: the codes as bare SHA-256, set aside by the migration
    // for the first start with the key, which keys them; the codes still sign in, once each.
    svc.stop();
    let legacy: Vec<String> = codes[1..].iter().map(|c| sha256_hex(c)).collect();
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).expect("the database");
    db.execute(
        "UPDATE members SET recovery_codes = NULL, recovery_codes_unkeyed = ?1 WHERE email = 'owner@example.fr'",
        [serde_json::to_string(&legacy).unwrap()],
    )
    .unwrap();
    drop(db);
    svc.boot().await;
    let stored = stored_codes(&svc, "owner@example.fr");
    assert_eq!(stored.len(), 9, "keyed at start");
    assert_eq!(column_of(&svc, "owner@example.fr", "recovery_codes_unkeyed"), None);
    assert!(stored.iter().all(|s| !legacy.contains(s)), "{stored:?}");
    let db = std::fs::read(svc.data_dir().join("sceau.db")).unwrap();
    for old in &legacy {
        assert!(!db.windows(old.len()).any(|w| w == old.as_bytes()), "{old} is still in the file");
    }
    assert_eq!(sign_in_with(&svc, &codes[1]).await.as_deref(), Some("/portal/"));
    assert_eq!(sign_in_with(&svc, &codes[1]).await, None, "spent");
}
