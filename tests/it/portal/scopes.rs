//! Roles hold through the API too (issue 28, item 5): an API key holds only the scopes of the role
//! of whoever made it. A developer (results without images) mints keys that read results and are
//! refused 403 `forbidden` on images and certificates, even through a forged form; an owner's
//! default key reaches them; the list says each key's scopes and maker; disabling the developer
//! revokes their keys when asked, and the audit log names them; a demotion narrows a member's
//! keys; the operator's `user disable` revokes them unless told to keep them.

use crate::support::portal::{Member, Page};
use crate::support::Service;
use serde_json::{json, Value};
use std::time::Duration;

/// A result of `key`'s company with a front image: its consultation id.
async fn a_result_with_images(svc: &Service, key: &str) -> String {
    let batch = svc.open_batch(key, None).await;
    let (status, body) = svc.deposit(key, &batch, "identite", &crate::support::png(32, 7)).await;
    assert_eq!(status, 201, "{body}");
    svc.post(key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    done["items"][0]["consultationId"].as_str().expect("a consultation").to_owned()
}

/// The key a page shows once after minting it.
fn secret(page: &Page) -> String {
    let marker = "data-testid=\"api-key-secret\">";
    let start = page.body.find(marker).unwrap_or_else(|| panic!("no new key: {}", page.body)) + marker.len();
    let end = page.body[start..].find('<').expect("the end of the key") + start;
    page.body[start..end].to_owned()
}

/// The row of the key `prefix` on an API keys page.
fn row<'a>(page: &'a Page, prefix: &str) -> &'a str {
    page.body
        .split("<tr data-testid=\"api-key-row\">")
        .find(|row| row.contains(prefix))
        .and_then(|row| row.split("</tr>").next())
        .unwrap_or_else(|| panic!("no row for {prefix}: {}", page.body))
}

/// The member `email`'s id, as the operator lists the company's team.
fn member_id(svc: &Service, company: &str, email: &str) -> String {
    let list = svc.admin(&["user", "list", "--company", company]);
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|m| m["email"] == email)
        .and_then(|m| m["id"].as_str())
        .expect("the member")
        .to_owned()
}

/// (action, target, actor) of every row of the company's audit log.
fn audit(svc: &Service, company: &str) -> Vec<(String, String, String)> {
    svc.admin(&["audit", "--company", company])["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("action"), s("target"), s("actor"))
        })
        .collect()
}

/// The status and error code of a GET of `path` with `key`.
async fn answer(svc: &Service, key: &str, path: &str) -> (u16, Option<String>) {
    let (status, body) = svc.get(key, path).await;
    (status, body["error"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn a_developers_key_reads_results_without_images_and_ends_with_the_developer() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let csl = a_result_with_images(&svc, &co.key).await;
    let (image, certificate) = (
        format!("/api/v1/consultations/{csl}/images/recto"),
        format!("/api/v1/consultations/{csl}/certificate"),
    );
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;

    // The developer's key, as the form makes it: it reads results, not their images.
    let minted = dev.submit("/portal/api-keys", "/portal/api-keys", &[]).await;
    assert_eq!(minted.status, 200, "{}", minted.body);
    let dev_key = secret(&minted);
    assert!(dev_key.starts_with("sk_live_"), "{dev_key}");
    let (status, list) = svc.get(&dev_key, "/api/v1/consultations").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["data"][0]["id"], csl.as_str(), "{list}");
    assert_eq!(svc.get(&dev_key, &format!("/api/v1/consultations/{csl}")).await.0, 200);
    assert_eq!(answer(&svc, &dev_key, "/api/v1/batches").await.0, 200);
    for path in [&image, &certificate] {
        assert_eq!(answer(&svc, &dev_key, path).await, (403, Some("forbidden".into())), "{path}");
    }
    // Their page offers no images box, and says why.
    let page = dev.get("/portal/api-keys").await;
    assert!(page.body.contains("data-testid=\"api-key-create\""), "{}", page.body);
    assert!(!page.body.contains("name=\"images\"") && page.body.contains("data-testid=\"api-key-no-images\""));
    let (_, refused) = svc.get(&dev_key, &image).await;
    assert!(
        refused["message"].as_str().unwrap_or_default().contains("images scope"),
        "{refused}"
    );
    // Read-only and test keys of the developer alike.
    let read_only = secret(
        &dev.submit("/portal/api-keys", "/portal/api-keys", &[("readOnly", "on"), ("test", "on")])
            .await,
    );
    assert!(read_only.starts_with("rk_test_"), "{read_only}");
    assert_eq!(answer(&svc, &read_only, &certificate).await, (403, Some("forbidden".into())));

    // A forged form asking the images is refused, and mints nothing.
    let keys_before = svc.admin(&["key", "list", "--company", &co.id])["data"].as_array().map(Vec::len);
    for fields in [vec![("images", "on")], vec![("images", "on"), ("readOnly", "on"), ("test", "on")]] {
        let forged = dev.submit("/portal/api-keys", "/portal/api-keys", &fields).await;
        assert_eq!(forged.status, 403, "{fields:?}: {}", forged.body);
        assert!(!forged.body.contains("data-testid=\"api-key-secret\""), "{}", forged.body);
        assert!(forged.body.contains("Votre rôle ne permet pas"), "{}", forged.body);
    }
    let keys_after = svc.admin(&["key", "list", "--company", &co.id])["data"].as_array().map(Vec::len);
    assert_eq!(keys_before, keys_after, "no key minted by a forged form");

    // The owner's form offers the images, ticked: their default key downloads both.
    let page = owner.get("/portal/api-keys").await;
    assert!(page.body.contains("name=\"images\" value=\"on\" checked"), "{}", page.body);
    let owner_key = secret(&owner.submit("/portal/api-keys", "/portal/api-keys", &[("images", "on")]).await);
    assert_eq!(answer(&svc, &owner_key, &image).await.0, 200);
    assert_eq!(answer(&svc, &owner_key, &certificate).await.0, 200);
    // Unticked, the owner's key has no images either.
    let owner_bare = secret(&owner.submit("/portal/api-keys", "/portal/api-keys", &[]).await);
    assert_eq!(answer(&svc, &owner_bare, &image).await.0, 403);
    // The operator's key keeps every scope.
    assert_eq!(answer(&svc, &co.key, &image).await.0, 200);

    // The list shows each key's scopes and maker, in the portal and in the CLI.
    let page = owner.get("/portal/api-keys").await;
    let dev_row = row(&page, &dev_key[..16]);
    assert!(
        dev_row.contains("Résultats sans images") && dev_row.contains("dev@example.fr"),
        "{dev_row}"
    );
    let owner_row = row(&page, &owner_key[..16]);
    assert!(
        owner_row.contains("Résultats, images et certificats") && owner_row.contains("owner@example.fr"),
        "{owner_row}"
    );
    let cli_row = row(&page, &co.key[..16]);
    assert!(
        cli_row.contains("opérateur") && cli_row.contains("images et certificats"),
        "{cli_row}"
    );
    let listed = svc.admin(&["key", "list", "--company", &co.id]);
    let by_prefix = |prefix: &str| -> Value {
        listed["data"]
            .as_array()
            .expect("data")
            .iter()
            .find(|k| k["prefix"] == prefix)
            .cloned()
            .unwrap_or_else(|| panic!("{prefix} in {listed}"))
    };
    let dev_listed = by_prefix(&dev_key[..16]);
    assert_eq!(
        (&dev_listed["scopes"], &dev_listed["createdBy"]),
        (&json!([]), &json!("dev@example.fr")),
        "{dev_listed}"
    );
    let cli_listed = by_prefix(&co.key[..16]);
    assert_eq!(
        (&cli_listed["scopes"], &cli_listed["createdBy"]),
        (&json!(["images"]), &json!("operator"))
    );
    assert!(!listed.to_string().contains(&dev_key), "prefixes only");

    // Disabling the developer asks first, says how many keys they made, and offers to revoke them.
    let dev_id = member_id(&svc, &co.id, "dev@example.fr");
    let asked = owner
        .submit("/portal/team", &format!("/portal/team/members/{dev_id}/disable"), &[])
        .await;
    let confirmation = asked.location.clone().expect("the confirmation page");
    assert_eq!(confirmation, format!("/portal/team/members/{dev_id}/disable"));
    assert_eq!(dev.get("/portal/").await.status, 200, "nothing done before the confirmation");
    let confirm = owner.get(&confirmation).await;
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    assert!(confirm.body.contains("data-testid=\"confirm-impact\""));
    assert!(confirm.body.contains("a créé 2 clés d’API actives"), "{}", confirm.body);
    assert!(confirm.body.contains(&dev_key[..16]) && confirm.body.contains(&read_only[..16]));
    assert!(
        confirm.body.contains("name=\"revokeKeys\" value=\"on\" checked"),
        "ticked by default"
    );
    assert!(confirm.body.contains("data-testid=\"confirm\""));
    let fields = ["csrf", "confirmed", "revokeKeys"].map(|name| (name, confirm.field(name)));
    let done = owner.post(&confirmation, &fields).await;
    assert_eq!(done.location.as_deref(), Some("/portal/team?flash=disabled&keys=2"));
    let team = owner.get("/portal/team?flash=disabled&keys=2").await;
    assert!(team.body.contains("Membre désactivé et 2 clés d’API révoquées."), "{}", team.body);
    assert_eq!(answer(&svc, &dev_key, "/api/v1/consultations").await.0, 401);
    assert_eq!(answer(&svc, &read_only, "/api/v1/consultations").await.0, 401);
    assert_eq!(answer(&svc, &owner_key, "/api/v1/consultations").await.0, 200, "others' keys stay");
    assert_eq!(dev.sign_in(crate::support::portal::PASSWORD).await.status, 401);

    // The audit log names the keys revoked, each and with the member.
    let rows = audit(&svc, &co.id);
    for prefix in [&dev_key[..16], &read_only[..16]] {
        let revoked = ("api_key.revoke".to_owned(), prefix.to_owned(), "owner@example.fr".to_owned());
        assert!(rows.contains(&revoked), "{revoked:?} in {rows:?}");
    }
    let disabled = rows.iter().find(|(action, ..)| action == "member.disable").expect("member.disable");
    assert!(
        disabled.1.starts_with("dev@example.fr (API keys revoked: ")
            && disabled.1.contains(&dev_key[..16])
            && disabled.1.contains(&read_only[..16]),
        "{disabled:?}"
    );
    let page = owner.get("/portal/audit?action=member.disable").await;
    assert!(page.body.contains(&dev_key[..16]), "{}", page.body);
    let log = svc.admin(&["audit", "--company", &co.id]).to_string();
    for key in [&dev_key, &read_only, &owner_key] {
        assert!(!log.contains(key.as_str()) && !svc.log().contains(key.as_str()), "a key leaked");
    }
}

#[tokio::test]
async fn a_demotion_narrows_a_members_keys_and_the_operator_revokes_them_on_disable() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let csl = a_result_with_images(&svc, &co.key).await;
    let image = format!("/api/v1/consultations/{csl}/images/recto");
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let admin = Member::joined(&svc, &co.id, "admin@example.fr", "admin").await;
    let admin_key = secret(&admin.submit("/portal/api-keys", "/portal/api-keys", &[("images", "on")]).await);
    assert_eq!(answer(&svc, &admin_key, &image).await.0, 200);

    // Made a developer: the key they made as an admin loses the images, and says so.
    let admin_id = member_id(&svc, &co.id, "admin@example.fr");
    let demoted = owner
        .submit(
            "/portal/team",
            &format!("/portal/team/members/{admin_id}/role"),
            &[("role", "developer")],
        )
        .await;
    assert_eq!(demoted.location.as_deref(), Some("/portal/team?flash=role"), "{}", demoted.body);
    assert_eq!(answer(&svc, &admin_key, &image).await, (403, Some("forbidden".into())));
    assert_eq!(answer(&svc, &admin_key, "/api/v1/consultations").await.0, 200);
    let page = owner.get("/portal/api-keys").await;
    assert!(row(&page, &admin_key[..16]).contains("Résultats sans images"));
    let role_row = audit(&svc, &co.id)
        .into_iter()
        .find(|(action, ..)| action == "member.role")
        .expect("member.role");
    assert!(role_row.1.contains(&admin_key[..16]), "{role_row:?}");

    // The operator disables them: their keys are revoked unless `--keep-keys`.
    let keeper = Member::joined(&svc, &co.id, "keeper@example.fr", "admin").await;
    let kept_key = secret(&keeper.submit("/portal/api-keys", "/portal/api-keys", &[("images", "on")]).await);
    let kept = svc.admin(&["user", "disable", &member_id(&svc, &co.id, "keeper@example.fr"), "--keep-keys"]);
    assert_eq!(
        (kept["state"].as_str(), &kept["revokedKeys"]),
        (Some("disabled"), &json!([])),
        "{kept}"
    );
    assert_eq!(answer(&svc, &kept_key, &image).await.0, 200, "kept, as asked");
    let disabled = svc.admin(&["user", "disable", &admin_id]);
    assert_eq!(disabled["revokedKeys"], json!([&admin_key[..16]]), "{disabled}");
    assert_eq!(answer(&svc, &admin_key, "/api/v1/consultations").await.0, 401);
    let rows = audit(&svc, &co.id);
    let revoked = ("api_key.revoke".to_owned(), admin_key[..16].to_owned(), "operator".to_owned());
    assert!(rows.contains(&revoked), "{rows:?}");
    let kept_row = format!("keeper@example.fr (API keys kept: {})", &kept_key[..16]);
    assert!(
        rows.iter()
            .any(|(action, target, _)| action == "member.disable" && *target == kept_row),
        "{rows:?}"
    );
}
