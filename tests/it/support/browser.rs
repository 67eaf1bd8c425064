//! Headless Chromium for the browser test of the journey: a `chromedriver` of our own on a free
//! port (killed with everything it launched when dropped), a WebDriver session on a phone-sized
//! window in a chosen language, DOM polling without timed assertions, and numbered screenshots kept
//! as test artefacts under `test-artifacts/browser/<mode>/<test>/`.

use super::{Mode, TempDir};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Fails (never skips) when the browser is missing: the suite is meant to run it everywhere.
fn require_browser() {
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER].into_iter().filter(|p| !Path::new(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "the browser test needs Chromium and its WebDriver, missing: {}; install them with scripts/system-deps \
         (Debian packages chromium and chromium-driver)",
        missing.join(", ")
    );
}

/// A port nobody listens on now (bound then released: `Driver::start` retries if it was taken since).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a free port")
        .port()
}

/// A running chromedriver, in a process group of its own so that dropping it ends the Chromium
/// processes it started as well, even when the test panics before closing its session.
pub struct Driver {
    child: Child,
    pub url: String,
}

impl Driver {
    pub async fn start(log: &Path) -> Driver {
        use std::os::unix::process::CommandExt as _;
        require_browser();
        let http = reqwest::Client::new();
        for _attempt in 0..5 {
            let port = free_port();
            let log_file = std::fs::File::create(log).expect("chromedriver log");
            let mut child = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdout(Stdio::from(log_file.try_clone().expect("chromedriver log")))
                .stderr(Stdio::from(log_file))
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
            let driver_url = format!("http://127.0.0.1:{port}");
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if child.try_wait().ok().flatten().is_some() {
                    break; // the port was taken in between, most likely: another one
                }
                let ready = match http.get(format!("{driver_url}/status")).send().await {
                    Ok(r) => r.json::<Value>().await.is_ok_and(|v| v["value"]["ready"] == true),
                    Err(_) => false,
                };
                if ready {
                    return Driver { child, url: driver_url };
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            kill_group(&mut child);
        }
        panic!(
            "{CHROMEDRIVER} never answered on its port; its log: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
}

fn kill_group(child: &mut Child) {
    // The group is the one `process_group(0)` made for this child: its id is the child's.
    let _ = Command::new("kill").arg("-KILL").arg("--").arg(format!("-{}", child.id())).status();
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Driver {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

/// The screen a test browses on: a phone (the journey) or a desktop (the portal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Phone,
    Desktop,
    /// The narrowest phone the journey is made for (390 × 844, an iPhone 12 to 15).
    SmallPhone,
    /// A common laptop (1366 × 900).
    Laptop,
}

impl Screen {
    /// The viewport's width in CSS pixels.
    pub fn width(self) -> u32 {
        self.size().0
    }

    fn size(self) -> (u32, u32) {
        match self {
            Screen::Phone => (412, 915),
            Screen::Desktop => (1280, 1000),
            Screen::SmallPhone => (390, 844),
            Screen::Laptop => (1366, 900),
        }
    }

    fn window_size(self) -> String {
        let (width, height) = self.size();
        format!("--window-size={width},{height}")
    }

    /// Phones are emulated: a window alone cannot be made narrower than 500 px.
    fn is_phone(self) -> bool {
        matches!(self, Screen::Phone | Screen::SmallPhone)
    }
}

/// Whether the pages' scripts run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scripts {
    On,
    Off,
}

/// A browser session. Fields drop in order: the client, then the driver, then the profile dir.
pub struct Browser {
    pub client: Client,
    _driver: Driver,
    _profile: TempDir,
    shots: PathBuf,
    shot: AtomicU32,
}

impl Browser {
    /// Headless Chromium in a phone-sized window whose `Accept-Language` is `lang`; screenshots go
    /// to `test-artifacts/browser/<mode>/<test>/` (emptied first).
    pub async fn start(test: &str, mode: Mode, lang: &str) -> Browser {
        Self::start_with(test, mode, lang, Screen::Phone).await
    }

    /// The same, on a screen of `screen`'s size.
    pub async fn start_with(test: &str, mode: Mode, lang: &str, screen: Screen) -> Browser {
        Self::launch(test, mode, lang, screen, Scripts::On).await
    }

    /// The same with the page's scripts turned off, as a customer's browser may have them. WebDriver
    /// does not wait for pages to load then (a page that refreshes itself without its script would
    /// keep it waiting): the test waits for what it looks for.
    pub async fn start_without_script(test: &str, mode: Mode, lang: &str, screen: Screen) -> Browser {
        Self::launch(test, mode, lang, screen, Scripts::Off).await
    }

    async fn launch(test: &str, mode: Mode, lang: &str, screen: Screen, scripts: Scripts) -> Browser {
        let mode = match mode {
            Mode::Embedded => "embedded",
            Mode::Distributed => "distributed",
        };
        let shots = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("test-artifacts/browser")
            .join(mode)
            .join(test);
        let _ = std::fs::remove_dir_all(&shots);
        std::fs::create_dir_all(&shots).expect("screenshot dir");
        let profile = TempDir::new("chromium");
        let driver = Driver::start(&shots.join("chromedriver.log")).await;
        let primary = lang.split('-').next().unwrap_or(lang);
        let mut capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-dev-shm-usage",
                    screen.window_size(),
                    format!("--lang={lang}"),
                    format!("--user-data-dir={}", profile.0.display()),
                ],
                "prefs": { "intl.accept_languages": format!("{lang},{primary}") },
            },
        });
        if scripts == Scripts::Off {
            capabilities["goog:chromeOptions"]["prefs"]["profile.managed_default_content_settings.javascript"] = json!(2);
            capabilities["pageLoadStrategy"] = json!("none");
        }
        if screen.is_phone() {
            // The window alone cannot be made narrower than 500 px: a phone's viewport, touch and all.
            let (width, height) = screen.size();
            capabilities["goog:chromeOptions"]["mobileEmulation"] =
                json!({ "deviceMetrics": { "width": width, "height": height, "pixelRatio": 1.0, "touch": true, "mobile": true } });
        }
        let Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver.url)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "cannot open a Chromium session through chromedriver: {e}; its log: {}",
                    std::fs::read_to_string(shots.join("chromedriver.log")).unwrap_or_default()
                )
            });
        Browser {
            client,
            _driver: driver,
            _profile: profile,
            shots,
            shot: AtomicU32::new(0),
        }
    }

    /// Scrolls the first element matching `css` to the middle of the screen (before a screenshot).
    pub async fn scroll_to(&self, css: &str) {
        self.client
            .execute(
                "document.querySelector(arguments[0]).scrollIntoView({block:'center'})",
                vec![json!(css)],
            )
            .await
            .unwrap_or_else(|e| panic!("scroll to {css}: {e}"));
    }

    /// Saves a numbered screenshot `NN-step.png` and returns its path.
    pub async fn screenshot(&self, step: &str) -> PathBuf {
        let n = self.shot.fetch_add(1, Ordering::Relaxed) + 1;
        let path = self.shots.join(format!("{n:02}-{step}.png"));
        let png = self.client.screenshot().await.expect("screenshot");
        assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
        std::fs::write(&path, png).expect("write screenshot");
        path
    }

    pub async fn text(&self, id: &str) -> String {
        self.client
            .find(Locator::Id(id))
            .await
            .unwrap_or_else(|e| panic!("#{id}: {e}"))
            .text()
            .await
            .unwrap_or_else(|e| panic!("text of #{id}: {e}"))
    }

    /// A DOM property (`value`, `className`, `disabled`…) of the element `id`, as the page sees it.
    pub async fn prop(&self, id: &str, prop: &str) -> Value {
        let script = "var e=document.getElementById(arguments[0]);return e?e[arguments[1]]:undefined";
        let value = self.client.execute(script, vec![json!(id), json!(prop)]).await;
        value.unwrap_or_else(|e| panic!("{prop} of #{id}: {e}"))
    }

    /// The class names of the element `id`.
    pub async fn classes(&self, id: &str) -> String {
        self.prop(id, "className").await.as_str().unwrap_or_default().to_owned()
    }

    pub async fn displayed(&self, id: &str) -> bool {
        match self.client.find(Locator::Id(id)).await {
            Ok(e) => e.is_displayed().await.unwrap_or(false),
            Err(_) => false,
        }
    }

    /// Chooses a file in the `<input type=file id=…>` as a user would: WebDriver types its path.
    pub async fn choose_file(&self, id: &str, path: &Path) {
        assert!(path.is_absolute() && path.exists(), "{} must exist", path.display());
        self.client
            .find(Locator::Id(id))
            .await
            .unwrap_or_else(|e| panic!("#{id}: {e}"))
            .send_keys(&path.display().to_string())
            .await
            .unwrap_or_else(|e| panic!("choose {} in #{id}: {e}", path.display()));
    }

    pub async fn click(&self, id: &str) {
        self.client
            .find(Locator::Id(id))
            .await
            .unwrap_or_else(|e| panic!("#{id}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("click #{id}: {e}"));
    }

    /// How many requests the page made to URLs containing `part` (from its resource timing).
    pub async fn requests_to(&self, part: &str) -> u64 {
        let script = "var part=arguments[0];\
                      return performance.getEntriesByType('resource').filter(function(e){return e.name.indexOf(part)>=0}).length";
        let n = self.client.execute(script, vec![json!(part)]).await.expect("resource timing");
        n.as_u64().unwrap_or_else(|| panic!("a count, not {n}"))
    }

    pub async fn body_text(&self) -> String {
        self.text_of_css("body").await
    }

    pub async fn text_of_css(&self, css: &str) -> String {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .text()
            .await
            .unwrap_or_default()
    }

    /// Polls `check` until it gives `Some`, or saves a `failure-…` screenshot and panics with
    /// `what` and the page's visible text after `timeout`.
    pub async fn wait<T, F: Future<Output = Option<T>>>(&self, timeout: Duration, what: &str, mut check: impl FnMut() -> F) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = check().await {
                return v;
            }
            if start.elapsed() > timeout {
                let shot = self
                    .screenshot(&format!("failure-{}", what.replace(|c: char| !c.is_alphanumeric(), "-")))
                    .await;
                panic!(
                    "timed out after {timeout:?} waiting for: {what}\npage text: {}\nscreenshot: {}",
                    self.body_text().await,
                    shot.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The element with this `data-testid` (the portal's test hooks).
    pub async fn testid(&self, id: &str) -> fantoccini::elements::Element {
        self.css(&format!("[data-testid='{id}']")).await
    }

    /// The first element matching `css`.
    pub async fn css(&self, css: &str) -> fantoccini::elements::Element {
        self.client.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}"))
    }

    /// How many elements match `css`.
    pub async fn count(&self, css: &str) -> usize {
        self.client.find_all(Locator::Css(css)).await.map_or(0, |all| all.len())
    }

    /// The visible text of the element with this `data-testid`.
    pub async fn testid_text(&self, id: &str) -> String {
        self.testid(id).await.text().await.unwrap_or_else(|e| panic!("text of {id}: {e}"))
    }

    /// Types `text` into the field matching `css`, after clearing it.
    pub async fn fill(&self, css: &str, text: &str) {
        let field = self.css(css).await;
        field.clear().await.unwrap_or_else(|e| panic!("clear {css}: {e}"));
        field.send_keys(text).await.unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Clicks the element matching `css` and waits for the page it leads to.
    pub async fn click_css(&self, css: &str) {
        // The old document is marked, so the wait below ends on the new one, not before it.
        self.client.execute("window.__leaving = true", vec![]).await.expect("mark the page");
        self.css(css).await.click().await.unwrap_or_else(|e| panic!("click {css}: {e}"));
        self.wait(Duration::from_secs(10), "the next page to load", || async {
            let ready = self
                .client
                .execute("return window.__leaving !== true && document.readyState === 'complete'", vec![])
                .await
                .ok()?;
            (ready == json!(true)).then_some(())
        })
        .await;
    }

    /// The page's accessibility basics (WCAG 2.1 AA as far as a script can tell): a language, one
    /// `h1`, every visible form control labelled, every image with a text alternative, no
    /// positive `tabindex` (keyboard order follows the page). Panics with what is missing.
    pub async fn assert_accessible(&self) {
        let script = r#"
            var problems = [];
            if (!document.documentElement.lang) problems.push('no lang on <html>');
            if (document.querySelectorAll('h1').length !== 1) problems.push(document.querySelectorAll('h1').length + ' h1');
            document.querySelectorAll('input:not([type=hidden]), select, textarea').forEach(function (e) {
                var named = (e.labels && e.labels.length > 0) || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby');
                if (!named) problems.push('unlabelled ' + e.tagName + ' ' + (e.name || e.id));
            });
            document.querySelectorAll('img').forEach(function (e) { if (!e.hasAttribute('alt')) problems.push('img without alt ' + e.src); });
            document.querySelectorAll('[tabindex]').forEach(function (e) { if (e.tabIndex > 0) problems.push('positive tabindex'); });
            return problems;"#;
        let problems = self.client.execute(script, vec![]).await.expect("accessibility script");
        let url = self.client.current_url().await.map(|u| u.to_string()).unwrap_or_default();
        assert_eq!(problems, json!([]), "accessibility of {url}");
    }

    /// The path of the current page.
    pub async fn path(&self) -> String {
        let url = self.client.current_url().await.expect("current url");
        url.path().to_owned()
    }

    /// Ends the WebDriver session cleanly (the driver and its processes go on drop).
    pub async fn close(self) {
        let Browser { client, .. } = self;
        let _ = client.close().await;
    }
}
