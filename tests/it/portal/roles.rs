//! The role matrix of PORTAL.md, enforced by the server: every role tries every portal action
//! (each page and each form), and gets it or a 403 — never a page or an effect its role may not
//! have. Allowed attempts are aimed at missing objects or invalid input where they would
//! otherwise change something, so one company serves the whole matrix. Also: each role's menu
//! holds exactly its sections, and the pages speak English when the browser asks.

use crate::support::journey::workflow;
use crate::support::portal::Member;
use crate::support::Service;

const ROLES: [&str; 5] = ["owner", "admin", "developer", "reviewer", "viewer"];

/// Who may do what (PORTAL.md, Who uses it), by the permission names of the matrix.
fn allowed(permission: &str) -> &'static [&'static str] {
    match permission {
        "results" => &["owner", "admin", "developer", "reviewer", "viewer"],
        "images" | "review" => &["owner", "admin", "reviewer"],
        "batches" => &["owner", "admin", "developer", "viewer"],
        "usage" => &["owner", "admin", "viewer"],
        "cancel" | "workflows" | "keys" => &["owner", "admin", "developer"],
        "team" | "settings" | "audit" => &["owner", "admin"],
        other => panic!("unknown permission {other}"),
    }
}

/// One attempt: method, path, form fields, the permission it needs.
struct Attempt {
    post: bool,
    path: String,
    fields: Vec<(&'static str, &'static str)>,
    permission: &'static str,
}

fn get(path: &str, permission: &'static str) -> Attempt {
    Attempt {
        post: false,
        path: path.to_owned(),
        fields: Vec::new(),
        permission,
    }
}

fn post(path: &str, fields: &[(&'static str, &'static str)], permission: &'static str) -> Attempt {
    Attempt {
        post: true,
        path: path.to_owned(),
        fields: fields.to_vec(),
        permission,
    }
}

#[tokio::test]
async fn every_role_gets_exactly_what_portal_md_gives_it() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let batch = svc.open_batch(&co.key, None).await;
    let mut members = Vec::new();
    for role in ROLES {
        members.push((role, Member::joined(&svc, &co.id, &format!("{role}@example.fr"), role).await));
    }
    // Well-formed ids of nothing: an allowed role is answered 404, a refused one 403.
    let (csl, mbr, bat, evt) = (
        "CSL-20260101-000000000000",
        "MBR-20260101-000000000000",
        "BAT-00000000-00000000",
        "evt_00000000000000000000000000",
    );
    let attempts = [
        get("/portal/", "results"),
        get("/portal/consultations", "results"),
        get(&format!("/portal/consultations/{csl}"), "results"),
        get(&format!("/portal/consultations/{csl}/images/recto"), "images"),
        get(&format!("/portal/consultations/{csl}/certificate"), "images"),
        post(
            &format!("/portal/consultations/{csl}/review"),
            &[("decision", "accept"), ("comment", "ok")],
            "review",
        ),
        get("/portal/reviews", "review"),
        get("/portal/batches", "batches"),
        get(&format!("/portal/batches/{batch}"), "batches"),
        post(&format!("/portal/batches/{bat}/cancel"), &[], "cancel"),
        get("/portal/workflows", "workflows"),
        post(
            "/portal/workflows",
            &[("name", "x"), ("category", "identite"), ("minAge", "500")],
            "workflows",
        ),
        get(&format!("/portal/workflows/{wf}"), "workflows"),
        post(&format!("/portal/workflows/{wf}"), &[("name", ""), ("minAge", "500")], "workflows"),
        get(&format!("/portal/workflows/{wf}/diffusion"), "workflows"),
        post(
            &format!("/portal/workflows/{wf}/diffusion"),
            &[("webhookUrl", "not a url")],
            "workflows",
        ),
        post(&format!("/portal/workflows/{wf}/diffusion/test"), &[], "workflows"),
        post(&format!("/portal/workflows/{wf}/diffusion/replay/{evt}"), &[], "workflows"),
        get("/portal/api-keys", "keys"),
        post("/portal/api-keys/sk_live_00000000/revoke", &[], "keys"),
        get("/portal/team", "team"),
        post(
            "/portal/team/invitations",
            &[("email", "not an address"), ("role", "viewer")],
            "team",
        ),
        post(&format!("/portal/team/members/{mbr}/role"), &[("role", "viewer")], "team"),
        post(&format!("/portal/team/members/{mbr}/disable"), &[], "team"),
        get(&format!("/portal/team/members/{mbr}/disable"), "team"),
        get("/portal/settings", "settings"),
        post("/portal/settings", &[("retentionDays", "99999")], "settings"),
        get("/portal/audit", "audit"),
        get("/portal/audit.csv", "audit"),
        get("/portal/usage", "usage"),
        get("/portal/usage.csv", "usage"),
    ];
    let mut wrong = Vec::new();
    for (role, member) in &members {
        for a in &attempts {
            let page = if a.post {
                member.submit("/portal/account", &a.path, &a.fields).await
            } else {
                member.get(&a.path).await
            };
            let may = allowed(a.permission).contains(role);
            let ok = if may {
                page.status != 403 && page.status < 500
            } else {
                page.status == 403
            };
            if !ok {
                wrong.push(format!(
                    "{role} {} {} → {}",
                    if a.post { "POST" } else { "GET" },
                    a.path,
                    page.status
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "answers against the matrix:\n{}", wrong.join("\n"));

    // Allowed GETs of pages that exist answer 200, not only "not 403".
    let (_, owner) = &members[0];
    for path in [
        "/portal/",
        "/portal/consultations",
        "/portal/reviews",
        "/portal/batches",
        "/portal/workflows",
        "/portal/api-keys",
        "/portal/team",
        "/portal/settings",
        "/portal/audit",
        "/portal/usage",
        "/portal/account",
    ] {
        assert_eq!(owner.get(path).await.status, 200, "{path}");
    }

    // Each menu holds exactly the sections of its role.
    let sections = [
        ("nav-dashboard", "results"),
        ("nav-consultations", "results"),
        ("nav-reviews", "review"),
        ("nav-batches", "batches"),
        ("nav-workflows", "workflows"),
        ("nav-api-keys", "keys"),
        ("nav-team", "team"),
        ("nav-settings", "settings"),
        ("nav-audit", "audit"),
        ("nav-usage", "usage"),
    ];
    for (role, member) in &members {
        let body = member.get("/portal/").await.body;
        for (testid, permission) in sections {
            let shown = body.contains(&format!("data-testid=\"{testid}\""));
            assert_eq!(shown, allowed(permission).contains(role), "{role} and {testid}");
        }
        assert!(body.contains("data-testid=\"sign-out\""));
    }
}

#[tokio::test]
async fn the_portal_speaks_english_when_the_browser_asks() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let owner = Member::joined(&svc, &co.id, "owner@example.fr", "owner").await;
    let english = owner
        .client
        .get(svc.url("/portal/"))
        .header("accept-language", "en-GB,en;q=0.9")
        .send()
        .await
        .unwrap();
    assert_eq!(english.headers()["content-language"], "en");
    let body = english.text().await.unwrap();
    assert!(
        body.contains("<html lang=\"en\"") && body.contains("Dashboard") && body.contains("Sign out"),
        "{body}"
    );
    let french = owner.get("/portal/").await.body;
    assert!(french.contains("Tableau de bord") && french.contains("Se déconnecter"));
    // A member's own choice outlives the browser's.
    let chosen = owner.submit("/portal/account", "/portal/account/language", &[("lang", "en")]).await;
    assert_eq!(chosen.status, 303);
    assert!(owner.get("/portal/").await.body.contains("Dashboard"));
}
