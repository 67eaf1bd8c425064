//! A member of a company's team in the portal, over plain HTTP (forms and cookies as a browser
//! sends them, no JavaScript needed), for the tests that do not need to see the pages.

use super::Service;
use reqwest::header::{HeaderMap, LOCATION};
use std::sync::Arc;

/// One browser-like client: its own cookies, redirects not followed so each step is visible.
pub struct Member {
    pub client: reqwest::Client,
    pub base: String,
    pub email: String,
    pub password: String,
}

/// What a portal request answered.
pub struct Page {
    pub status: u16,
    pub location: Option<String>,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    /// The value of the hidden field `name` in the page's first form that has one.
    pub fn field(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let start = self
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("no field {name} in the page: {}", self.body))
            + marker.len();
        let end = self.body[start..].find('"').expect("the end of the value") + start;
        self.body[start..end].to_owned()
    }
}

pub const PASSWORD: &str = "correct horse battery staple";

impl Member {
    pub fn new(svc: &Service, email: &str) -> Member {
        Member {
            client: reqwest::Client::builder()
                .cookie_provider(Arc::new(reqwest::cookie::Jar::default()))
                .redirect(reqwest::redirect::Policy::none())
                .pool_idle_timeout(gateway::server::CLIENT_POOL_IDLE)
                .build()
                .expect("client"),
            base: svc.base.clone(),
            email: email.to_owned(),
            password: PASSWORD.to_owned(),
        }
    }

    /// Invited by the operator with `role`, joined through the link: signed in.
    pub async fn joined(svc: &Service, company: &str, email: &str, role: &str) -> Member {
        let invite = svc.admin(&["user", "invite", "--company", company, "--email", email, "--role", role]);
        let member = Member::new(svc, email);
        let url = invite["inviteUrl"].as_str().expect("inviteUrl");
        let joined = member.accept(url).await;
        assert_eq!(
            (joined.status, joined.location.as_deref()),
            (303, Some("/portal/")),
            "{}",
            joined.body
        );
        member
    }

    /// Opens the invitation link `url` and chooses this member's password on its page; what the
    /// page answered to the password.
    pub async fn accept(&self, url: &str) -> Page {
        let page = self.get_url(url).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let fields = [
            ("formToken", page.field("formToken")),
            ("password", self.password.clone()),
            ("passwordConfirm", self.password.clone()),
        ];
        self.post_url(url, &fields).await
    }

    pub async fn get(&self, path: &str) -> Page {
        self.get_url(&format!("{}{path}", self.base)).await
    }

    async fn get_url(&self, url: &str) -> Page {
        read(self.client.get(url).send().await.expect("GET")).await
    }

    pub async fn post(&self, path: &str, fields: &[(&str, String)]) -> Page {
        self.post_url(&format!("{}{path}", self.base), fields).await
    }

    async fn post_url(&self, url: &str, fields: &[(&str, String)]) -> Page {
        read(self.client.post(url).form(fields).send().await.expect("POST")).await
    }

    /// Posts a form of a signed-in page with its CSRF token (read from `from`, a page of the portal).
    pub async fn submit(&self, from: &str, path: &str, fields: &[(&str, &str)]) -> Page {
        let csrf = self.get(from).await.field("csrf");
        let mut all: Vec<(&str, String)> = vec![("csrf", csrf)];
        all.extend(fields.iter().map(|(k, v)| (*k, (*v).to_owned())));
        self.post(path, &all).await
    }

    /// Signs in with e-mail and password (the sign-in page's form token first).
    pub async fn sign_in(&self, password: &str) -> Page {
        let token = self.get("/portal/login").await.field("formToken");
        self.post(
            "/portal/login",
            &[
                ("formToken", token),
                ("email", self.email.clone()),
                ("password", password.to_owned()),
            ],
        )
        .await
    }
}

async fn read(response: reqwest::Response) -> Page {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let location = headers.get(LOCATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = response.text().await.unwrap_or_default();
    Page {
        status,
        location,
        headers,
        body,
    }
}
