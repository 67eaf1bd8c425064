//! The portal's company administration (PORTAL.md pages 8–11): the team (invitations, roles,
//! disabling, the owner rules), the settings that change the API's behaviour, the audit log with
//! its CSV export, and usage. In Chromium for the owner's path, over HTTP for the rules.

use crate::support::browser::{Browser, Screen};
use crate::support::portal::{Member, PASSWORD};
use crate::support::smtp::Smtp;
use crate::support::Service;

const ADMIN_PDF: &str = "/work/shared/data/samples/administratif/sample-domicile-v03-photo.jpg";

#[tokio::test]
async fn an_owner_invites_a_member_changes_their_role_and_disables_them() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let b = Browser::start_with("portal_team", svc.mode, "fr-FR", Screen::Desktop).await;
    b.client.goto(&svc.url("/portal/login")).await.unwrap();
    b.fill("input[name=email]", &owner.email).await;
    b.fill("input[name=password]", PASSWORD).await;
    b.click_css("main button[type=submit]").await;
    b.click_css("[data-testid='nav-team']").await;
    b.screenshot("team").await;
    b.fill("[data-testid='team-invite'] input[name=email]", "ana@example.fr").await;
    b.css("[data-testid='team-invite'] select[name=role] option[value=reviewer]")
        .await
        .click()
        .await
        .unwrap();
    b.click_css("[data-testid='team-invite'] button[type=submit]").await;
    let url = b.testid_text("invite-url").await;
    assert!(url.starts_with(&format!("{}/portal/invitations/", svc.base)), "{url}");
    assert_eq!(b.count("[data-testid='invitation-row']").await, 1);
    b.screenshot("invited").await;

    // Ana joins through the link (over HTTP) and works as a reviewer.
    let ana = Member::new(&svc, "ana@example.fr");
    let form = ana.get(url.trim_start_matches(&svc.base)).await;
    let joined = ana
        .post(
            url.trim_start_matches(&svc.base),
            &[
                ("formToken", form.field("formToken")),
                ("password", PASSWORD.into()),
                ("passwordConfirm", PASSWORD.into()),
            ],
        )
        .await;
    assert_eq!(joined.location.as_deref(), Some("/portal/"));
    let dashboard = ana.get("/portal/").await;
    assert!(dashboard.body.contains("data-testid=\"nav-reviews\"") && !dashboard.body.contains("data-testid=\"nav-team\""));
    assert_eq!(ana.get("/portal/team").await.status, 403, "a reviewer has no team page");

    // The owner makes her a viewer: her session ends, her next one has the new role.
    b.client.refresh().await.unwrap();
    b.client.goto(&svc.url("/portal/team")).await.unwrap();
    let row = "[data-testid='member-row']:nth-child(2)";
    b.css(&format!("{row} select[name=role] option[value=viewer]"))
        .await
        .click()
        .await
        .unwrap();
    b.click_css(&format!("{row} [data-testid='member-role-save']")).await;
    assert!(b.testid_text("flash-ok").await.contains("Rôle changé"));
    assert_eq!(
        ana.get("/portal/").await.location.as_deref(),
        Some("/portal/login"),
        "her session ended"
    );
    assert_eq!(ana.sign_in(PASSWORD).await.location.as_deref(), Some("/portal/"));
    assert!(ana.get("/portal/").await.body.contains("data-testid=\"nav-usage\""), "now a viewer");

    // Disabled once confirmed: no session, no sign-in.
    b.click_css(&format!("{row} [data-testid='member-disable']")).await;
    assert!(
        b.testid_text("confirm-impact").await.contains("n’a créé aucune clé d’API"),
        "{}",
        b.body_text().await
    );
    b.assert_accessible().await;
    b.screenshot("confirm-disable").await;
    b.click_css("[data-testid='confirm']").await;
    assert!(b.testid_text("flash-ok").await.contains("désactivé"));
    b.screenshot("disabled").await;
    assert_eq!(ana.get("/portal/").await.location.as_deref(), Some("/portal/login"));
    assert_eq!(ana.sign_in(PASSWORD).await.status, 401);
    b.close().await;

    let audit = svc.admin(&["audit", "--company", &co.id]);
    let actions: Vec<&str> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    for action in ["member.invite", "member.role", "member.disable"] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
}

#[tokio::test]
async fn admins_never_make_or_unmake_owners_and_a_company_keeps_one() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let admin = Member::joined(&svc, &co.id, "admin@example.fr", "admin").await;
    let list = svc.admin(&["user", "list", "--company", &co.id]);
    let id_of = |email: &str| {
        list["data"].as_array().unwrap().iter().find(|m| m["email"] == email).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (owner_id, admin_id) = (id_of("owner@example.fr"), id_of("admin@example.fr"));

    let invite_owner = admin
        .submit(
            "/portal/team",
            "/portal/team/invitations",
            &[("email", "x@example.fr"), ("role", "owner")],
        )
        .await;
    assert_eq!(invite_owner.status, 403, "an admin cannot invite an owner");
    let demote = admin
        .submit(
            "/portal/team",
            &format!("/portal/team/members/{owner_id}/role"),
            &[("role", "viewer")],
        )
        .await;
    assert_eq!(demote.status, 403);
    let disable = admin
        .submit("/portal/team", &format!("/portal/team/members/{owner_id}/disable"), &[])
        .await;
    assert_eq!(disable.status, 403);
    let promote = admin
        .submit(
            "/portal/team",
            &format!("/portal/team/members/{admin_id}/role"),
            &[("role", "owner")],
        )
        .await;
    assert_eq!(promote.status, 403, "nor make themselves owner");

    let alone = owner
        .submit(
            "/portal/team",
            &format!("/portal/team/members/{owner_id}/role"),
            &[("role", "admin")],
        )
        .await;
    assert_eq!(alone.status, 422, "{}", alone.body);
    assert!(alone.body.contains("garde toujours un propriétaire"), "{}", alone.body);
    let taken = owner
        .submit(
            "/portal/team",
            "/portal/team/invitations",
            &[("email", "ADMIN@example.fr"), ("role", "viewer")],
        )
        .await;
    assert_eq!(taken.status, 422, "an address with an account");

    // Another company's member is not found.
    let other = svc.company();
    let stranger = Member::joined(&svc, &other.id, "stranger@example.fr", "owner").await;
    let reach = stranger
        .submit("/portal/team", &format!("/portal/team/members/{admin_id}/disable"), &[])
        .await;
    assert_eq!(reach.status, 404);
}

#[tokio::test]
async fn settings_change_the_api_and_the_audit_log_exports_what_happened() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let batch = svc.open_batch(&co.key, None).await;
    let document = std::fs::read(ADMIN_PDF).unwrap();

    let bad = owner
        .submit("/portal/settings", "/portal/settings", &[("retentionDays", "9999")])
        .await;
    assert_eq!(bad.status, 422);
    // A lower retention deletes images: it is saved once confirmed, with the settings submitted.
    let asked = owner
        .submit("/portal/settings", "/portal/settings", &[("retentionDays", "7")])
        .await;
    let confirmation = asked.location.expect("the confirmation page");
    assert_eq!(confirmation, "/portal/settings/confirm?retentionDays=7");
    let confirm = owner.get(&confirmation).await;
    let fields = ["csrf", "retentionDays", "confirmed"].map(|name| (name, confirm.field(name)));
    let saved = owner.post("/portal/settings", &fields).await;
    assert_eq!(saved.location.as_deref(), Some("/portal/settings?flash=saved"));
    let (status, body) = svc.deposit(&co.key, &batch, "administratif", &document).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("ia_desactivee")), "{body}");
    let shown = svc.admin(&["company", "show", &co.id]);
    assert_eq!(
        (shown["aiEnabled"].as_bool(), shown["retentionDays"].as_u64()),
        (Some(false), Some(7)),
        "{shown}"
    );
    owner
        .submit(
            "/portal/settings",
            "/portal/settings",
            &[("aiEnabled", "on"), ("retentionDays", "7")],
        )
        .await;
    let (status, body) = svc.deposit(&co.key, &batch, "administratif", &document).await;
    assert_eq!(status, 201, "{body}");

    let page = owner.get("/portal/audit").await;
    assert!(page.body.matches("data-testid=\"audit-row\"").count() >= 4, "{}", page.body);
    let filtered = owner.get("/portal/audit?action=company.settings").await;
    assert_eq!(filtered.body.matches("data-testid=\"audit-row\"").count(), 2);
    let csv = owner.get("/portal/audit.csv?action=company.settings").await;
    assert_eq!(csv.headers["content-type"], "text/csv; charset=utf-8");
    assert_eq!(csv.headers["content-security-policy"], "sandbox");
    let lines: Vec<&str> = csv.body.lines().collect();
    assert_eq!(lines[0], "at,actor,action,target,ip");
    assert_eq!(lines.len(), 3, "{}", csv.body);
    assert!(lines[1].contains("owner@example.fr,company.settings,"), "{}", lines[1]);

    let usage = owner.get("/portal/usage").await;
    assert_eq!(usage.body.matches("data-testid=\"usage-row\"").count(), 12);
    let csv = owner.get("/portal/usage.csv").await;
    assert_eq!(csv.body.lines().next(), Some("month,acts,batchDocuments,journeys"));
    assert_eq!(csv.body.lines().count(), 13);

    // Two-factor required: a member without it is sent to enrol before anything else.
    owner
        .submit(
            "/portal/settings",
            "/portal/settings",
            &[("aiEnabled", "on"), ("retentionDays", "7"), ("twoFactorRequired", "on")],
        )
        .await;
    let sent = owner.get("/portal/team").await;
    assert_eq!(sent.location.as_deref(), Some("/portal/account/two-factor"));
    assert_eq!(
        owner.get("/portal/account").await.status,
        200,
        "the account page stays open to enrol"
    );
}

#[tokio::test]
async fn invitations_are_emailed_when_smtp_is_configured() {
    let smtp = Smtp::start().await;
    let svc = Service::start(&[
        ("SCEAU_SMTP_URL", smtp.url.as_str()),
        ("SCEAU_SMTP_FROM", "Sceau <portal@example.fr>"),
    ])
    .await;
    let co = svc.company();
    let invite = svc.admin(&[
        "user",
        "invite",
        "--company",
        &co.id,
        "--email",
        "first@example.fr",
        "--role",
        "owner",
    ]);
    assert_eq!(invite["mailed"], true);
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let page = owner
        .submit(
            "/portal/team",
            "/portal/team/invitations",
            &[("email", "dev@example.fr"), ("role", "developer")],
        )
        .await;
    assert!(page.body.contains("envoyée par e-mail"), "{}", page.body);
    let mails = smtp.mails.lock().unwrap().clone();
    let to: Vec<&str> = mails.iter().flat_map(|m| m.to.iter().map(String::as_str)).collect();
    assert!(to.contains(&"first@example.fr") && to.contains(&"dev@example.fr"), "{to:?}");
    let first = mails.iter().find(|m| m.to == ["first@example.fr"]).unwrap();
    let link = invite["inviteUrl"].as_str().unwrap();
    let token = link.rsplit('/').next().unwrap();
    let unfolded = first.data.replace("=\n", "");
    assert!(
        unfolded.contains(token) || unfolded.contains(&token.replace('=', "=3D")),
        "the link is in the mail: {}",
        first.data
    );
}

/// The invitation link a Team page shows after inviting.
fn invite_url(body: &str) -> String {
    let marker = "data-testid=\"invite-url\">";
    let start = body.find(marker).unwrap_or_else(|| panic!("no invitation link: {body}")) + marker.len();
    body[start..].split('<').next().expect("the link").to_owned()
}

/// An admin learns nothing from inviting about another company's members, and takes over or
/// blocks none of them: inviting answers alike for an address that is B's member, one B invited,
/// and one nobody knows; the link for B's member fails as an expired one does and leaves their
/// account as it was; B's own invitation still works. Only an account holds an address.
#[tokio::test]
async fn invitations_neither_probe_nor_squat_another_companys_members() {
    let svc = Service::start(&[]).await;
    let (a, b) = (svc.company(), svc.company());
    let owner_a = Member::joined(&svc, &a.id, "owner-a@example.fr", "owner").await;
    let owner_b = Member::joined(&svc, &b.id, "owner-b@example.fr", "owner").await;
    let bob = Member::joined(&svc, &b.id, "bob@example.fr", "viewer").await;
    let carol_in_b = owner_b
        .submit(
            "/portal/team",
            "/portal/team/invitations",
            &[("email", "carol@example.fr"), ("role", "viewer")],
        )
        .await;
    assert_eq!(carol_in_b.status, 200, "{}", carol_in_b.body);
    let carol_link_b = invite_url(&carol_in_b.body);

    // B's member, B's invitee, a stranger: the same answer each time, a link each time.
    let mut links = Vec::new();
    for email in ["bob@example.fr", "carol@example.fr", "dan@example.fr"] {
        let page = owner_a
            .submit("/portal/team", "/portal/team/invitations", &[("email", email), ("role", "admin")])
            .await;
        assert_eq!(page.status, 200, "{email}: {}", page.body);
        assert!(!page.body.contains("flash-error"), "{email}: {}", page.body);
        assert!(page.body.contains("Invitation créée."), "{email}: {}", page.body);
        links.push(invite_url(&page.body));
    }
    // The operator's CLI answers alike too.
    let again = svc.admin(&[
        "user",
        "invite",
        "--company",
        &a.id,
        "--email",
        "bob@example.fr",
        "--role",
        "viewer",
    ]);
    assert_eq!(again["email"], "bob@example.fr", "{again}");
    let bob_link_a = again["inviteUrl"].as_str().unwrap().to_owned();

    // Whoever holds A's link for bob (A's admin, say) cannot take bob's address: the page says
    // what it says of an expired link, and bob's account, password and session stay B's.
    let mut squatter = Member::new(&svc, "bob@example.fr");
    squatter.password = "a password of the squatter".into();
    let refused = squatter.accept(&bob_link_a).await;
    assert_eq!(refused.status, 404, "{}", refused.body);
    assert!(refused.body.contains("plus valable"), "{}", refused.body);
    assert_eq!(squatter.sign_in("a password of the squatter").await.status, 401);
    let back = Member::new(&svc, "bob@example.fr");
    assert_eq!(back.sign_in(PASSWORD).await.location.as_deref(), Some("/portal/"));
    assert_eq!(bob.get("/portal/").await.status, 200, "bob's session still open");

    // A's invitation did not block B's: carol joins B through B's link; A's link then fails alike.
    let carol = Member::new(&svc, "carol@example.fr");
    assert_eq!(carol.accept(&carol_link_b).await.location.as_deref(), Some("/portal/"));
    assert_eq!(Member::new(&svc, "carol@example.fr").accept(&links[1]).await.status, 404);
    // A stranger's link works as ever.
    let dan = Member::new(&svc, "dan@example.fr");
    assert_eq!(dan.accept(&links[2]).await.location.as_deref(), Some("/portal/"));

    // A's team still shows bob and carol invited: nothing tells A what became of them.
    let team_a = owner_a.get("/portal/team").await;
    assert_eq!(team_a.body.matches("data-testid=\"invitation-row\"").count(), 2, "{}", team_a.body);
    assert_eq!(team_a.body.matches("data-testid=\"member-row\"").count(), 2, "owner and dan");
    let team_b = owner_b.get("/portal/team").await;
    assert_eq!(team_b.body.matches("data-testid=\"member-row\"").count(), 3, "owner, bob, carol");
    assert_eq!(team_b.body.matches("data-testid=\"invitation-row\"").count(), 0);
}
