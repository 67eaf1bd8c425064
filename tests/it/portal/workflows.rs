//! The portal's Workflows pages and their Diffusion tab (PORTAL.md page 6), black-box: the real
//! binary, real HTTP, a real webhook receiver verifying signatures, headless Chromium with a
//! screenshot of every step under `test-artifacts/browser/<mode>/portal_workflows/`.

use crate::support::browser::{Browser, Screen};
use crate::support::portal::{Member, Page, PASSWORD};
use crate::support::receiver::Receiver;
use crate::support::Service;
use serde_json::Value;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

/// The company's workflows as the operator's CLI lists them (rules and webhook URL included).
fn workflows(svc: &Service, company: &str) -> Vec<Value> {
    svc.admin(&["workflow", "list", "--company", company])["data"]
        .as_array()
        .expect("data")
        .clone()
}

fn workflow(svc: &Service, company: &str, id: &str) -> Value {
    workflows(svc, company)
        .into_iter()
        .find(|w| w["id"] == id)
        .unwrap_or_else(|| panic!("no workflow {id}"))
}

/// An identity workflow made by the operator, its events going to `url` when given.
fn operator_workflow(svc: &Service, company: &str, url: Option<&str>) -> String {
    let mut args = vec![
        "workflow",
        "create",
        "--company",
        company,
        "--name",
        "KYC",
        "--category",
        "identite",
    ];
    if let Some(url) = url {
        args.extend(["--webhook-url", url]);
    }
    svc.admin(&args)["id"].as_str().expect("id").to_owned()
}

fn audit_actions(svc: &Service, company: &str) -> Vec<String> {
    svc.admin(&["audit", "--company", company])["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| e["action"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A refused form: 422, its error notice, nothing else.
fn assert_refused(page: &Page, what: &str) {
    assert_eq!(page.status, 422, "{what}: {}", page.body);
    assert!(page.body.contains("data-testid=\"flash-error\""), "{what}: {}", page.body);
}

#[tokio::test]
async fn a_developer_creates_a_workflow_sets_its_webhook_and_sees_the_test_delivery() {
    let svc = Service::start(&[("SCEAU_WEBHOOK_ALLOW_HOSTS", "127.0.0.1")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let invite = svc.admin(&[
        "user",
        "invite",
        "--company",
        &co.id,
        "--email",
        "dev@example.fr",
        "--role",
        "developer",
    ]);
    let url = invite["inviteUrl"].as_str().expect("inviteUrl").to_owned();

    let b = Browser::start_with("portal_workflows", svc.mode, "fr-FR", Screen::Desktop).await;
    b.client.goto(&url).await.expect("open the invitation");
    b.fill("input[name=password]", PASSWORD).await;
    b.fill("input[name=passwordConfirm]", PASSWORD).await;
    b.screenshot("invitation").await;
    b.click_css("main button[type=submit]").await;
    assert_eq!(b.path().await, "/portal/");
    b.click_css("[data-testid='nav-workflows']").await;
    assert_eq!(b.path().await, "/portal/workflows");
    let before = b.count("[data-testid='workflow-row']").await;
    b.screenshot("workflows").await;

    // Create: name, category, minimum age.
    b.fill("[data-testid='workflow-create'] input[name=name]", "Ouverture de compte")
        .await;
    b.css("[data-testid='workflow-create'] select[name=category] option[value='identite']")
        .await
        .click()
        .await
        .expect("choose identite");
    b.fill("[data-testid='workflow-create'] input[name=minAge]", "18").await;
    b.screenshot("create-form").await;
    b.click_css("[data-testid='workflow-create'] button[type=submit]").await;
    assert!(b.testid_text("flash-ok").await.contains("Parcours créé"));
    assert_eq!(b.count("[data-testid='workflow-row']").await, before + 1);
    assert!(b.testid_text("workflow-row").await.contains("Ouverture de compte"), "newest first");
    b.screenshot("created").await;

    // Open it, then its Diffusion tab.
    b.click_css("[data-testid='workflow-row'] a").await;
    let settings_path = b.path().await;
    assert!(settings_path.starts_with("/portal/workflows/WFL-"), "{settings_path}");
    let wf_id = settings_path.trim_start_matches("/portal/workflows/").to_owned();
    assert_eq!(
        b.css("input[name=minAge]").await.prop("value").await.expect("minAge").as_deref(),
        Some("18")
    );
    b.screenshot("settings").await;
    b.click_css("[data-testid='tab-diffusion']").await;
    assert_eq!(b.path().await, format!("/portal/workflows/{wf_id}/diffusion"));
    assert_eq!(b.count("[data-testid='webhook-test']").await, 0, "no test button without a URL");
    b.screenshot("diffusion-empty").await;

    b.fill("[data-testid='webhook-form'] input[name=webhookUrl]", &hook.url).await;
    b.click_css("[data-testid='webhook-form'] button[type=submit]").await;
    assert!(b.testid_text("flash-ok").await.contains("URL du webhook enregistrée"));
    b.screenshot("webhook-saved").await;

    b.click_css("[data-testid='webhook-test']").await;
    assert!(b.testid_text("flash-ok").await.contains("verification.test"));
    b.screenshot("test-sent").await;
    let got = hook.wait_for(1, WAIT).await;
    assert!(got[0].signature_valid, "signed with the company's secret: {:?}", got[0]);
    assert_eq!(got[0].body["event"], "verification.test");
    assert_eq!(got[0].body["workflowId"], wf_id.as_str());
    assert_eq!(got[0].body["externalRef"], "TEST");

    // The delivery appears once the notifier's report is recorded: reload, bounded.
    let start = Instant::now();
    loop {
        b.client.refresh().await.expect("reload");
        if b.count("[data-testid='delivery-row']").await >= 1 && b.testid_text("delivery-row").await.contains("200") {
            break;
        }
        assert!(start.elapsed() < WAIT, "no delivery row after {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let row = b.testid_text("delivery-row").await;
    assert!(
        row.contains("verification.test") && row.contains(got[0].id.as_str()) && row.contains("Livré"),
        "{row}"
    );
    assert!(row.contains(" ms"), "the attempt's duration: {row}");
    b.client
        .execute("document.querySelector(\"[data-testid='delivery-row']\").scrollIntoView()", vec![])
        .await
        .expect("scroll to the deliveries");
    b.screenshot("delivery").await;

    // A test URL beside the live one: the first makes the test secret, shown this once.
    let test_hook = Receiver::start(&co.secret, &[]).await;
    b.fill("[data-testid='webhook-form'] input[name=testWebhookUrl]", &test_hook.url)
        .await;
    b.click_css("[data-testid='webhook-form'] button[type=submit]").await;
    let test_secret = b.testid_text("test-signing-secret").await;
    assert!(test_secret.starts_with("whsec_test_"), "{test_secret}");
    b.client
        .execute(
            "document.querySelector(\"[data-testid='test-signing-secret']\").scrollIntoView()",
            vec![],
        )
        .await
        .expect("scroll to the test secret");
    b.screenshot("test-secret").await;
    b.close().await;

    // The API lists it; its rules (which the API does not expose) are the operator's to read.
    let (status, listed) = svc.get(&co.key, "/api/v1/workflows").await;
    assert_eq!(status, 200);
    let api = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|w| w["id"] == wf_id.as_str())
        .unwrap_or_else(|| panic!("{wf_id} missing from {listed}"));
    assert_eq!(
        (&api["name"], &api["documentCategory"]),
        (&Value::from("Ouverture de compte"), &Value::from("identite"))
    );
    let wf = workflow(&svc, &co.id, &wf_id);
    assert_eq!(wf["rules"]["minAge"], 18, "{wf}");
    assert_eq!(wf["webhookUrl"], hook.url.as_str());
    assert_eq!(wf["testWebhookUrl"], test_hook.url.as_str());
    let actions = audit_actions(&svc, &co.id);
    for action in ["workflow.create", "workflow.webhook_url", "workflow.webhook_test"] {
        assert!(actions.iter().any(|a| a == action), "{action} in {actions:?}");
    }
}

#[tokio::test]
async fn invalid_rules_and_destinations_are_refused_with_422_and_nothing_is_written() {
    let svc = Service::start(&[("SCEAU_WEBHOOK_ALLOW_HOSTS", "")]).await;
    let co = svc.company();
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let count = workflows(&svc, &co.id).len();
    let list = "/portal/workflows";

    let cases: [(&str, [(&str, &str); 4]); 6] = [
        (
            "minAge 0",
            [("name", "A"), ("category", "identite"), ("minAge", "0"), ("acceptedCountries", "")],
        ),
        (
            "minAge 121",
            [
                ("name", "A"),
                ("category", "identite"),
                ("minAge", "121"),
                ("acceptedCountries", ""),
            ],
        ),
        (
            "minAge text",
            [
                ("name", "A"),
                ("category", "identite"),
                ("minAge", "dix"),
                ("acceptedCountries", ""),
            ],
        ),
        (
            "unknown country",
            [
                ("name", "A"),
                ("category", "identite"),
                ("minAge", "18"),
                ("acceptedCountries", "FRA, XYZ"),
            ],
        ),
        (
            "no name",
            [("name", "  "), ("category", "identite"), ("minAge", ""), ("acceptedCountries", "")],
        ),
        (
            "unknown category",
            [("name", "A"), ("category", "autre"), ("minAge", ""), ("acceptedCountries", "")],
        ),
    ];
    for (what, fields) in cases {
        let page = dev.submit(list, list, &fields).await;
        assert_refused(&page, what);
    }
    let page = dev
        .submit(
            list,
            list,
            &[
                ("name", "Typed"),
                ("category", "identite"),
                ("minAge", "18"),
                ("acceptedCountries", "fra, XYZ"),
            ],
        )
        .await;
    assert_refused(&page, "unknown country");
    assert!(
        page.body.contains("XYZ") && page.body.contains("value=\"fra, XYZ\""),
        "the values typed are kept"
    );
    assert!(page.body.contains("value=\"Typed\"") && page.body.contains("value=\"18\""));
    let wrong_type = dev
        .submit(
            list,
            list,
            &[("name", "A"), ("category", "identite"), ("acceptedDocumentTypes", "facture")],
        )
        .await;
    assert_refused(&wrong_type, "a type of the other category");
    assert_eq!(workflows(&svc, &co.id).len(), count, "nothing written");

    // A valid one, then its settings: the same checks on update.
    let created = dev
        .submit(
            list,
            list,
            &[
                ("name", "Onboarding"),
                ("category", "identite"),
                ("minAge", "18"),
                ("acceptedCountries", "fra, bel"),
                ("acceptedDocumentTypes", "passeport"),
                ("acceptedDocumentTypes", "carte_identite"),
                ("systematicReview", "on"),
            ],
        )
        .await;
    assert_eq!(
        (created.status, created.location.as_deref()),
        (303, Some("/portal/workflows?flash=created")),
        "{}",
        created.body
    );
    let wf = workflows(&svc, &co.id)
        .into_iter()
        .find(|w| w["name"] == "Onboarding")
        .expect("created");
    let id = wf["id"].as_str().unwrap().to_owned();
    assert_eq!(
        wf["rules"],
        serde_json::json!({"minAge": 18, "acceptedCountries": ["FRA", "BEL"], "acceptedDocumentTypes": ["passeport", "carte_identite"], "systematicReview": true})
    );
    let settings = format!("/portal/workflows/{id}");
    let refused = dev.submit(&settings, &settings, &[("name", "Renamed"), ("minAge", "121")]).await;
    assert_refused(&refused, "update with minAge 121");
    assert!(refused.body.contains("value=\"Renamed\""));
    assert_eq!(workflow(&svc, &co.id, &id)["name"], "Onboarding", "nothing written");
    let saved = dev.submit(&settings, &settings, &[("name", "Renamed"), ("minAge", "21")]).await;
    assert_eq!(
        (saved.status, saved.location),
        (303, Some(format!("{settings}?flash=saved"))),
        "{}",
        saved.body
    );
    let wf = workflow(&svc, &co.id, &id);
    assert_eq!(
        (&wf["name"], &wf["rules"]),
        (
            &Value::from("Renamed"),
            &serde_json::json!({"minAge": 21, "systematicReview": false})
        )
    );

    // The category is editable too, its rules checked against the new one; the default batch
    // workflow of a category keeps its category.
    let unknown = dev
        .submit(&settings, &settings, &[("name", "Renamed"), ("category", "autre")])
        .await;
    assert_refused(&unknown, "update to an unknown category");
    let mismatched = dev
        .submit(
            &settings,
            &settings,
            &[
                ("name", "Renamed"),
                ("category", "administratif"),
                ("acceptedDocumentTypes", "passeport"),
            ],
        )
        .await;
    assert_refused(&mismatched, "a passport in an administrative workflow");
    assert_eq!(workflow(&svc, &co.id, &id)["documentCategory"], "identite", "nothing written");
    let moved = dev
        .submit(
            &settings,
            &settings,
            &[
                ("name", "Justificatifs"),
                ("category", "administratif"),
                ("acceptedDocumentTypes", "facture"),
            ],
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.body);
    let wf = workflow(&svc, &co.id, &id);
    assert_eq!(
        (&wf["name"], &wf["documentCategory"], &wf["rules"]),
        (
            &Value::from("Justificatifs"),
            &Value::from("administratif"),
            &serde_json::json!({"acceptedDocumentTypes": ["facture"], "systematicReview": false})
        )
    );
    let shown = dev.get(&settings).await;
    assert!(
        shown.body.contains("<option value=\"administratif\" selected>"),
        "the settings tab shows the new category: {}",
        shown.body
    );
    let default_batch = workflows(&svc, &co.id)
        .into_iter()
        .find(|w| w["defaultBatch"] == true && w["documentCategory"] == "identite")
        .expect("the identity category's default batch workflow");
    let batch_settings = format!("/portal/workflows/{}", default_batch["id"].as_str().unwrap());
    let kept = dev
        .submit(&batch_settings, &batch_settings, &[("name", "Lots"), ("category", "administratif")])
        .await;
    assert_refused(&kept, "the default batch workflow's category");
    assert!(kept.body.contains("garde sa catégorie"), "{}", kept.body);
    assert_eq!(
        workflow(&svc, &co.id, default_batch["id"].as_str().unwrap())["documentCategory"],
        "identite"
    );

    // Destinations: the notifier's guard, with nothing allow-listed.
    let diffusion = format!("{settings}/diffusion");
    for url in [
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest",
        "http://hooks.example.com/hook",
        "not a url",
    ] {
        let page = dev.submit(&diffusion, &diffusion, &[("webhookUrl", url)]).await;
        assert_refused(&page, url);
        assert!(page.body.contains(&format!("value=\"{url}\"")), "{url} shown back");
        assert_eq!(workflow(&svc, &co.id, &id)["webhookUrl"], Value::Null, "{url}: nothing written");
    }
    let set = dev
        .submit(&diffusion, &diffusion, &[("webhookUrl", "https://hooks.example.com/sceau")])
        .await;
    assert_eq!((set.status, set.location), (303, Some(format!("{diffusion}?flash=url_saved"))));
    assert_eq!(workflow(&svc, &co.id, &id)["webhookUrl"], "https://hooks.example.com/sceau");
    let removed = dev.submit(&diffusion, &diffusion, &[("webhookUrl", "")]).await;
    assert_eq!(
        (removed.status, removed.location),
        (303, Some(format!("{diffusion}?flash=url_removed")))
    );
    assert_eq!(workflow(&svc, &co.id, &id)["webhookUrl"], Value::Null);
    // Without a URL there is nothing to test.
    let test = dev.submit(&diffusion, &format!("{diffusion}/test"), &[]).await;
    assert_eq!(test.status, 409, "{}", test.body);

    let actions = audit_actions(&svc, &co.id);
    let n = |a: &str| actions.iter().filter(|x| *x == a).count();
    assert_eq!(
        (
            n("workflow.create"),
            n("workflow.update"),
            n("workflow.webhook_url"),
            n("workflow.webhook_test")
        ),
        // Two updates saved (rules, then category); the refused ones leave no row.
        (1, 2, 2, 0),
        "{actions:?}"
    );
}

#[tokio::test]
async fn reviewers_and_viewers_are_refused_and_another_company_finds_nothing() {
    let svc = Service::start(&[]).await;
    let (a, b) = (svc.company(), svc.company());
    let hook = Receiver::start(&a.secret, &[]).await;
    let id = operator_workflow(&svc, &a.id, Some(&hook.url));
    let settings = format!("/portal/workflows/{id}");
    let diffusion = format!("{settings}/diffusion");
    let gets = ["/portal/workflows".to_owned(), settings.clone(), diffusion.clone()];
    let posts = [
        ("/portal/workflows".to_owned(), vec![("name", "X"), ("category", "identite")]),
        (settings.clone(), vec![("name", "X")]),
        (diffusion.clone(), vec![("webhookUrl", "https://evil.example.com/")]),
        (diffusion.clone(), vec![("testWebhookUrl", "https://evil.example.com/")]),
        (format!("{diffusion}/test"), vec![]),
        (format!("{diffusion}/rotate"), vec![]),
        (format!("{diffusion}/rotate-test"), vec![]),
        (format!("{diffusion}/replay/evt_01JAAAAAAAAAAAAAAAAAAAAAAA"), vec![]),
    ];

    for role in ["reviewer", "viewer"] {
        let member = Member::joined(&svc, &a.id, &format!("{role}@example.fr"), role).await;
        let home = member.get("/portal/").await;
        assert!(!home.body.contains("nav-workflows"), "{role} does not see Workflows");
        for path in &gets {
            assert_eq!(member.get(path).await.status, 403, "{role} GET {path}");
        }
        for (path, fields) in &posts {
            assert_eq!(
                member.submit("/portal/account", path, fields).await.status,
                403,
                "{role} POST {path}"
            );
        }
    }

    let other = Member::joined(&svc, &b.id, "dev@b.example.fr", "developer").await;
    for path in &gets[1..] {
        assert_eq!(other.get(path).await.status, 404, "another company's {path}");
    }
    for (path, fields) in &posts[1..] {
        assert_eq!(
            other.submit("/portal/workflows", path, fields).await.status,
            404,
            "another company's POST {path}"
        );
    }
    let wf = workflow(&svc, &a.id, &id);
    assert_eq!(
        (&wf["name"], &wf["webhookUrl"], &wf["testWebhookUrl"]),
        (&Value::from("KYC"), &Value::from(hook.url.as_str()), &Value::Null),
        "nothing written"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(hook.received().is_empty(), "no test event sent");
    assert!(audit_actions(&svc, &a.id)
        .iter()
        .all(|a| !a.starts_with("workflow.") && !a.starts_with("company.rotate_")));
    let b_actions = audit_actions(&svc, &b.id);
    assert!(!b_actions.iter().any(|a| a.starts_with("company.rotate_")), "{b_actions:?}");
}

/// The `v1,` entries of a `webhook-signature` header.
fn signatures(header: &str) -> usize {
    header.split(' ').filter(|s| s.starts_with("v1,")).count()
}

#[tokio::test]
async fn a_rotated_secret_is_shown_once_and_deliveries_then_carry_both_signatures() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let old_hook = Receiver::start(&co.secret, &[]).await;
    let id = operator_workflow(&svc, &co.id, Some(&old_hook.url));
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let diffusion = format!("/portal/workflows/{id}/diffusion");

    let before = dev.get(&diffusion).await;
    assert_eq!(before.status, 200);
    assert!(!before.body.contains("whsec_"), "the secret is never shown outside a rotation");
    dev.submit(&diffusion, &format!("{diffusion}/test"), &[]).await;
    let got = old_hook.wait_for(1, WAIT).await;
    assert_eq!(signatures(&got[0].signature), 1, "one secret, one signature: {}", got[0].signature);

    let rotated = dev.submit(&diffusion, &format!("{diffusion}/rotate"), &[]).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let marker = "data-testid=\"signing-secret\">";
    let start = rotated.body.find(marker).expect("the new secret is shown") + marker.len();
    let secret = rotated.body[start..].split('<').next().unwrap().to_owned();
    assert!(secret.starts_with("whsec_") && secret != co.secret, "{secret}");
    let again = dev.get(&diffusion).await;
    assert!(
        !again.body.contains(&secret) && !again.body.contains("signing-secret"),
        "shown once"
    );

    // The old secret still verifies (the receiver knows only it), and two signatures are sent.
    dev.submit(&diffusion, &format!("{diffusion}/test"), &[]).await;
    let got = old_hook.wait_for(2, WAIT).await;
    assert!(got[1].signature_valid, "the previous secret keeps signing");
    assert_eq!(signatures(&got[1].signature), 2, "{}", got[1].signature);
    // A receiver that knows only the new secret accepts them too.
    let new_hook = Receiver::start(&secret, &[]).await;
    let set = dev.submit(&diffusion, &diffusion, &[("webhookUrl", new_hook.url.as_str())]).await;
    assert_eq!(set.status, 303);
    dev.submit(&diffusion, &format!("{diffusion}/test"), &[]).await;
    let got = new_hook.wait_for(1, WAIT).await;
    assert!(got[0].signature_valid, "the new secret signs");
    assert_eq!(signatures(&got[0].signature), 2);
    let actions = audit_actions(&svc, &co.id);
    assert_eq!(actions.iter().filter(|a| *a == "company.rotate_secret").count(), 1, "{actions:?}");
}

#[tokio::test]
async fn a_dead_event_is_replayed_from_the_diffusion_tab() {
    let svc = Service::start(&[("SCEAU_RETRY_SCHEDULE", "100ms,100ms")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[500, 500, 500]).await;
    let id = operator_workflow(&svc, &co.id, Some(&hook.url));
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let diffusion = format!("/portal/workflows/{id}/diffusion");

    let sent = dev.submit(&diffusion, &format!("{diffusion}/test"), &[]).await;
    assert_eq!((sent.status, sent.location), (303, Some(format!("{diffusion}?flash=test_sent"))));
    let got = hook.wait_for(3, WAIT).await;
    let event = got[0].id.clone();
    crate::support::eventually(WAIT, "the event is dead-lettered", || async {
        let dead = svc.admin(&["webhook", "dead-letters", "--company", &co.id]);
        dead["data"].as_array().unwrap().len() == 1 && dead["data"][0]["eventId"] == event.as_str()
    })
    .await;
    let page = dev.get(&diffusion).await;
    assert_eq!(
        page.body.matches("data-testid=\"delivery-row\"").count(),
        3,
        "three attempts: {}",
        page.body
    );
    assert_eq!(
        page.body.matches("data-testid=\"delivery-replay\"").count(),
        1,
        "one dead event to replay"
    );
    assert!(page.body.contains("Abandonné") && page.body.contains("500"));

    let replay = format!("{diffusion}/replay/{event}");
    let replayed = dev.submit(&diffusion, &replay, &[]).await;
    assert_eq!(
        (replayed.status, replayed.location),
        (303, Some(format!("{diffusion}?flash=replayed"))),
        "{}",
        replayed.body
    );
    let got = hook.wait_for(4, WAIT).await;
    assert_eq!(got[3].id, event, "the same event, delivered again");
    assert!(got[3].signature_valid);
    crate::support::eventually(WAIT, "the replayed event is delivered", || async {
        let e = &svc.admin(&["webhook", "list", "--company", &co.id])["data"][0];
        e["status"] == "delivered" && e["attempts"] == 1
    })
    .await;
    // Only dead letters are replayed.
    let again = dev.submit(&diffusion, &replay, &[]).await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(audit_actions(&svc, &co.id).iter().filter(|a| *a == "webhook.replay").count(), 1);
}

/// What the page shows between `marker` and the next tag.
fn shown_after<'a>(body: &'a str, marker: &str) -> Option<&'a str> {
    let start = body.find(marker)? + marker.len();
    body[start..].split('<').next()
}

#[tokio::test]
async fn the_test_url_and_secret_are_set_in_the_diffusion_tab_and_test_events_never_reach_the_live_url() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    // Both receivers verify with the live secret, as a live endpoint built to the spec does.
    let live_hook = Receiver::start(&co.secret, &[]).await;
    let test_hook = Receiver::start(&co.secret, &[]).await;
    let id = operator_workflow(&svc, &co.id, Some(&live_hook.url));
    let dev = Member::joined(&svc, &co.id, "dev@example.fr", "developer").await;
    let diffusion = format!("/portal/workflows/{id}/diffusion");
    let before = dev.get(&diffusion).await;
    assert!(
        before.body.contains("name=\"testWebhookUrl\"") && before.body.contains("data-testid=\"test-secret-rotate\""),
        "{}",
        before.body
    );

    // A refused test URL writes nothing, the live one included.
    let refused = dev
        .submit(
            &diffusion,
            &diffusion,
            &[("webhookUrl", ""), ("testWebhookUrl", "https://10.1.2.3/hook")],
        )
        .await;
    assert_refused(&refused, "an internal test URL");
    assert!(refused.body.contains("value=\"https://10.1.2.3/hook\""), "shown back");
    let wf = workflow(&svc, &co.id, &id);
    assert_eq!(
        (wf["webhookUrl"].as_str(), &wf["testWebhookUrl"]),
        (Some(live_hook.url.as_str()), &Value::Null)
    );

    // The first test URL makes the test secret, shown in that answer only.
    let fields = [("webhookUrl", live_hook.url.as_str()), ("testWebhookUrl", test_hook.url.as_str())];
    let saved = dev.submit(&diffusion, &diffusion, &fields).await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    let secret = shown_after(&saved.body, "data-testid=\"test-signing-secret\">")
        .expect("the test secret is shown")
        .to_owned();
    assert!(secret.starts_with("whsec_test_"), "{secret}");
    assert_eq!(workflow(&svc, &co.id, &id)["testWebhookUrl"], test_hook.url.as_str());
    let again = dev.get(&diffusion).await;
    assert!(!again.body.contains("whsec_"), "shown once");
    let resaved = dev.submit(&diffusion, &diffusion, &fields).await;
    assert_eq!(
        (resaved.status, resaved.location),
        (303, Some(format!("{diffusion}?flash=url_saved")))
    );
    // A test key made now finds the test secret made: it comes without one.
    let made = svc.admin(&["key", "create", "--company", &co.id, "--test"]);
    assert!(made.get("testWebhookSecret").is_none(), "{made}");
    let test_key = made["key"].as_str().expect("key").to_owned();

    // A test key's result goes to the test URL, signed with the test secret only.
    let (status, session) = svc
        .post(
            &test_key,
            "/api/v1/verifications",
            serde_json::json!({ "workflowId": id, "externalRef": "essai" }),
        )
        .await;
    assert_eq!(status, 201, "{session}");
    let simulate = format!("/api/v1/verifications/{}/simulate", session["id"].as_str().expect("id"));
    let (status, body) = svc.post(&test_key, &simulate, serde_json::json!({ "verdict": "conforme" })).await;
    assert_eq!(status, 200, "{body}");
    let got = test_hook.wait_for(1, WAIT).await;
    assert!(!got[0].signature_valid, "the live secret must refuse a test event");
    assert!(got[0].verifies_with(&secret));
    crate::support::eventually(WAIT, "the test delivery is listed", || async {
        let page = dev.get(&diffusion).await;
        page.body.matches("data-testid=\"test-delivery-row\"").count() == 1 && page.body.contains("Livré")
    })
    .await;
    let page = dev.get(&diffusion).await;
    assert_eq!(page.body.matches("data-testid=\"delivery-row\"").count(), 0, "no live delivery");

    // The live test button still checks the live URL with the live secret.
    dev.submit(&diffusion, &format!("{diffusion}/test"), &[]).await;
    let live = live_hook.wait_for(1, WAIT).await;
    assert!(live[0].signature_valid && !live[0].verifies_with(&secret));
    assert_eq!(live[0].body["event"], "verification.test");

    // Renewed: a new test secret, shown once; the live secret does not move.
    let rotated = dev.submit(&diffusion, &format!("{diffusion}/rotate-test"), &[]).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let renewed = shown_after(&rotated.body, "data-testid=\"test-signing-secret\">").expect("shown");
    assert!(renewed.starts_with("whsec_test_") && renewed != secret, "{renewed}");
    assert!(
        !rotated.body.contains("data-testid=\"signing-secret\""),
        "the live secret is not renewed"
    );

    // No test URL: the next test event is kept as not sent, and listed so.
    let cleared = dev
        .submit(
            &diffusion,
            &diffusion,
            &[("webhookUrl", live_hook.url.as_str()), ("testWebhookUrl", "")],
        )
        .await;
    assert_eq!(cleared.status, 303, "{}", cleared.body);
    let (_, session) = svc
        .post(
            &test_key,
            "/api/v1/verifications",
            serde_json::json!({ "workflowId": id, "externalRef": "essai-2" }),
        )
        .await;
    let simulate = format!("/api/v1/verifications/{}/simulate", session["id"].as_str().expect("id"));
    assert_eq!(
        svc.post(&test_key, &simulate, serde_json::json!({ "verdict": "conforme" })).await.0,
        200
    );
    let page = dev.get(&diffusion).await;
    assert_eq!(page.body.matches("data-testid=\"test-delivery-row\"").count(), 2, "{}", page.body);
    assert!(page.body.contains("Non envoyé : aucune URL de test"), "{}", page.body);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!((live_hook.received().len(), test_hook.received().len()), (1, 1));
    let actions = audit_actions(&svc, &co.id);
    assert_eq!(
        actions.iter().filter(|a| *a == "company.rotate_test_secret").count(),
        1,
        "{actions:?}"
    );
}
