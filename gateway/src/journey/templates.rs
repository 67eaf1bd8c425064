//! The journey's HTML as maud templates: every interpolation is escaped unless marked otherwise,
//! and only the page's own CSS, JS and JSON configuration are (the JSON with `<` escaped so no
//! value can close its element).

use super::assets::{CSS, JS};
use crate::i18n::journey::Strings;
use crate::i18n::privacy::Notice;
use common::document::accept_attribute;
use common::store::verifications::JourneyCompany;
use domain::branding::AccentColor;
use domain::journey::JourneyFile;
use domain::vocabulary::{DocumentCategory, JourneySide, Mode};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// What a page's `<head>` carries besides the fixed CSS.
pub struct Head<'a> {
    pub title: &'a str,
    /// The session's token for the script's writes.
    pub csrf: Option<&'a str>,
    /// Whether the page runs the journey's script.
    pub script: bool,
    /// The company's colours (see [`theme`]).
    pub theme: Option<&'a str>,
    /// Reload every few seconds when the script does not run (the "being checked" page: without
    /// JavaScript, the reload shows the next state).
    pub refresh_without_script: bool,
}

/// A whole page.
pub fn document(t: &Strings, head: &Head<'_>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(t.code) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta name="robots" content="noindex";
                @if let Some(csrf) = head.csrf {
                    meta name="csrf-token" content=(csrf);
                }
                @if head.refresh_without_script {
                    noscript { meta http-equiv="refresh" content="5"; }
                }
                title { (head.title) }
                style { (PreEscaped(CSS)) }
                @if let Some(theme) = head.theme {
                    style { (PreEscaped(theme)) }
                }
            }
            body {
                main { (body) }
                @if head.script {
                    script { (PreEscaped(JS)) }
                }
            }
        }
    }
}

/// The company's accent as CSS custom properties (a checked `#rrggbb` and its legible text
/// colour: nothing a client typed reaches the stylesheet otherwise).
pub fn theme(accent: AccentColor) -> String {
    format!(":root{{--accent:{};--on-accent:{}}}", accent.hex(), accent.text_hex())
}

/// Who is asking, at the top of every page of a session: the company's logo and name.
pub fn brand(company: &JourneyCompany, logo_url: &str) -> Markup {
    let name = company.display_name();
    html! {
        header.brand {
            @if company.settings.has_logo {
                img.logo src=(logo_url) alt="" data-testid="journey-logo";
            }
            p.company data-testid="journey-company-name" { (name) }
        }
    }
}

/// The privacy notice, before anything is asked of the customer.
fn privacy_notice(notice: &Notice) -> Markup {
    html! {
        section.privacy data-testid="journey-privacy" aria-labelledby="privacy-title" {
            h2 id="privacy-title" { (notice.heading) }
            dl {
                @for line in &notice.lines {
                    dt { (line.label) }
                    dd { (line.text) }
                }
            }
            @if let Some((url, words)) = &notice.policy {
                p { a href=(url) data-testid="journey-privacy-link" rel="noopener" { (words) } }
            }
        }
    }
}

/// A title and one sentence: unknown, expired, used links and errors.
pub fn message(title: &str, text: &str) -> Markup {
    html! {
        h1 { (title) }
        p { (text) }
    }
}

/// What a test-mode session's pages say first, plainly.
fn test_banner(t: &Strings, mode: Mode) -> Markup {
    html! {
        @if mode == Mode::Test {
            p.test-mode role="note" data-testid="journey-test-mode" { strong { (t.test_mode) } }
        }
    }
}

/// What every end of a session shows: its short reference, and the way back to the client when
/// the client gave one.
pub struct End<'a> {
    pub reference: String,
    pub return_url: Option<&'a str>,
}

fn way_back(t: &Strings, end: &End<'_>) -> Markup {
    html! {
        p.reference data-testid="journey-reference" {
            (t.reference_label) " " strong { (end.reference) }
        }
        @if let Some(url) = end.return_url {
            p { a.button href=(url) data-testid="journey-return-link" { (t.return_label) } }
        }
    }
}

/// A session that has ended: its title and sentence, after the test banner of a test session,
/// then its reference and the way back.
pub fn ended(t: &Strings, mode: Mode, brand: Markup, title: &str, text: &str, end: &End<'_>) -> Markup {
    html! {
        (test_banner(t, mode))
        (brand)
        (message(title, text))
        (way_back(t, end))
    }
}

/// The capture form, its later states and the script's configuration.
pub struct FormPage<'a> {
    pub mode: Mode,
    pub category: DocumentCategory,
    pub brand: Markup,
    pub intro: &'a str,
    pub notice: &'a Notice,
    pub config: &'a str,
    pub end: &'a End<'a>,
    /// The QR code of the page's link (inline SVG made by `common::qr::svg`), for wide screens.
    pub handoff: &'a str,
    /// Where the form posts without the script (the page's own path), and its CSRF token.
    pub action: &'a str,
    pub csrf: &'a str,
    /// What the page knows of each file (after a plain form post; the script fills the same
    /// places itself), and what it says of the form as a whole.
    pub states: &'a SideStates,
    pub message: Option<&'a str>,
}

/// What the page says of one file when it is rendered.
#[derive(Debug, Default, Clone)]
pub struct SideState {
    /// Received already (the input is then optional: the file stands unless replaced).
    pub received: bool,
    /// Why the file just sent was refused.
    pub error: Option<String>,
    /// The quick look's advice on the file just received.
    pub warnings: Vec<&'static str>,
}

/// The state of each file of a journey.
#[derive(Debug, Default, Clone)]
pub struct SideStates(pub Vec<(JourneySide, SideState)>);

impl SideStates {
    /// The files already received, as the session holds them.
    pub fn received(sides: &[JourneySide]) -> Self {
        Self(
            sides
                .iter()
                .map(|side| {
                    (
                        *side,
                        SideState {
                            received: true,
                            ..SideState::default()
                        },
                    )
                })
                .collect(),
        )
    }

    pub fn of(&self, side: JourneySide) -> SideState {
        self.0
            .iter()
            .find(|(s, _)| *s == side)
            .map(|(_, state)| state.clone())
            .unwrap_or_default()
    }

    pub fn set(&mut self, side: JourneySide, state: SideState) {
        self.0.retain(|(s, _)| *s != side);
        self.0.push((side, state));
    }
}

pub fn form(t: &Strings, page: &FormPage<'_>) -> Markup {
    let (mode, category, config, end) = (page.mode, page.category, page.config, page.end);
    html! {
        (test_banner(t, mode))
        (page.brand)
        @if !page.handoff.is_empty() {
            aside.handoff aria-labelledby="handoff-title" {
                h2 id="handoff-title" { (t.handoff_title) }
                p { (t.handoff_text) }
                (PreEscaped(page.handoff))
            }
        }
        form id="journey" method="post" action=(page.action) enctype="multipart/form-data" novalidate {
            // First, so the server checks it before reading any file of a plain form post.
            input type="hidden" name="csrf" value=(page.csrf);
            h1 id="journey-title" tabindex="-1" { (t.heading(category)) }
            p { (page.intro) }
            (privacy_notice(page.notice))
            @for file in JourneySide::of(category) {
                @if file.side == JourneySide::Selfie {
                    (consent_step(t))
                }
                (side_step(t, category, *file, &page.states.of(file.side)))
            }
            p.msg.err[page.message.is_some()] id="form-msg" role="alert" { @if let Some(m) = page.message { (m) } }
            button type="submit" id="submit" { (t.submit) }
            p.small { (t.privacy) }
        }
        (after_sections(t, true, end))
        (configuration(config))
    }
}

/// A submitted session: the "being checked" state, then the thank-you.
pub fn checking(t: &Strings, mode: Mode, brand: Markup, config: &str, end: &End<'_>) -> Markup {
    html! {
        (test_banner(t, mode))
        (brand)
        (after_sections(t, false, end))
        (configuration(config))
    }
}

/// The consent to the biometric comparison, before the selfie: unticked, and optional (without
/// it a person compares the selfie).
fn consent_step(t: &Strings) -> Markup {
    html! {
        div.step.consent {
            input type="checkbox" id="biometricConsent" name="biometricConsent" value="true"
                data-testid="journey-biometric-consent" aria-describedby="biometricConsent-text";
            label for="biometricConsent" { (t.consent_label) }
            p.hint id="biometricConsent-text" { (t.consent_text) }
        }
    }
}

/// One file to give: its label, hint, input, preview, progress and message.
fn side_step(t: &Strings, category: DocumentCategory, file: JourneyFile, state: &SideState) -> Markup {
    let required = file.required && !state.received;
    let id = file.side.as_str();
    let (label, capture) = match file.side {
        JourneySide::Front => (t.front, Some("environment")),
        JourneySide::Back => (t.back, Some("environment")),
        JourneySide::Selfie => (t.selfie, Some("user")),
        // A document may be a PDF picked from the phone's files: no forced camera.
        JourneySide::Document => (t.document, None),
    };
    html! {
        div.step {
            label for=(id) {
                (label)
                @if !file.required {
                    " "
                    span.small { "(" (t.optional) ")" }
                }
            }
            div.advice {
                (framing(file.side))
                p id={ (id) "-advice" } { (t.advice(file.side)) }
            }
            p.hint id={ (id) "-hint" } { (t.file_hint(category)) }
            input type="file" id=(id) name=(id) accept=(accept_attribute(category)) capture=[capture]
                required[required] aria-required=[required.then_some("true")]
                aria-describedby={ (id) "-advice " (id) "-hint " (id) "-msg" };
            img.preview id={ (id) "-preview" } alt="" hidden;
            progress id={ (id) "-progress" } max="100" value="0" aria-label=(t.progress) hidden {}
            @match (&state.error, state.received) {
                (Some(error), _) => p.msg.err id={ (id) "-msg" } role="status" aria-live="polite" { (error) },
                (None, true) => p.msg.ok id={ (id) "-msg" } role="status" aria-live="polite" { (t.uploaded) },
                (None, false) => p.msg id={ (id) "-msg" } role="status" aria-live="polite" {},
            }
            div.warnings id={ (id) "-warnings" } {
                @if !state.warnings.is_empty() {
                    @for warning in &state.warnings {
                        p.warn data-testid="upload-quality-warning" { (warning) }
                    }
                    p.small { (t.warn_keep) }
                    // A label opens the file picker without any script.
                    label.button.retake for=(id) data-testid="upload-retake" { (t.retake) }
                }
            }
        }
    }
}

/// A simple drawing of how to frame a file (inline SVG, no request): a card or a page inside the
/// camera's corners, or a face inside an oval.
fn framing(side: JourneySide) -> Markup {
    let corners = "M6 20V6h14M100 6h14v14M114 60v14h-14M20 74H6V60";
    html! {
        svg.framing viewBox="0 0 120 80" width="90" height="60" aria-hidden="true" focusable="false" {
            path d=(corners) fill="none" stroke="currentColor" stroke-width="3" {}
            @match side {
                JourneySide::Selfie => {
                    ellipse cx="60" cy="38" rx="20" ry="26" fill="none" stroke="currentColor" stroke-width="2" stroke-dasharray="4 3" {}
                    circle cx="53" cy="34" r="2" fill="currentColor" {}
                    circle cx="67" cy="34" r="2" fill="currentColor" {}
                    path d="M52 48q8 6 16 0" fill="none" stroke="currentColor" stroke-width="2" {}
                }
                JourneySide::Document => {
                    rect x="42" y="12" width="36" height="56" rx="2" fill="none" stroke="currentColor" stroke-width="2" {}
                    path d="M48 22h24M48 30h24M48 38h18M48 56h12" stroke="currentColor" stroke-width="2" {}
                }
                JourneySide::Front => {
                    rect x="22" y="18" width="76" height="46" rx="4" fill="none" stroke="currentColor" stroke-width="2" {}
                    rect x="28" y="26" width="18" height="24" rx="2" fill="currentColor" opacity="0.35" {}
                    path d="M52 30h38M52 38h30M52 46h34" stroke="currentColor" stroke-width="2" {}
                }
                JourneySide::Back => {
                    rect x="22" y="18" width="76" height="46" rx="4" fill="none" stroke="currentColor" stroke-width="2" {}
                    path d="M28 46h64M28 52h64M28 58h64" stroke="currentColor" stroke-width="2" stroke-dasharray="3 1" {}
                }
            }
        }
    }
}

/// The "being checked" and thank-you sections; the script shows one after the other.
fn after_sections(t: &Strings, checking_hidden: bool, end: &End<'_>) -> Markup {
    html! {
        section id="checking" hidden[checking_hidden] {
            h1 id="checking-title" tabindex="-1" { (t.checking_title) }
            p role="status" aria-live="polite" { (t.checking_text) }
            progress aria-label=(t.checking_title) {}
        }
        section id="done" hidden {
            h1 id="done-title" tabindex="-1" { (t.done_title) }
            p { (t.done_text) }
            (way_back(t, end))
        }
    }
}

/// The script's data, as JSON in a non-executed `<script type="application/json">`; `<` is
/// escaped so no string can close the element.
fn configuration(json: &str) -> Markup {
    html! {
        script type="application/json" id="cfg" { (PreEscaped(json.replace('<', "\\u003c"))) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{privacy, Lang};
    use domain::branding::{DisplayName, JourneySettings};

    fn end(return_url: Option<&str>) -> End<'_> {
        End {
            reference: "3F2A-91BC".into(),
            return_url,
        }
    }

    fn company(logo: bool) -> JourneyCompany {
        JourneyCompany {
            name: "Banque <Exemple> SA".into(),
            workflow_display_name: None,
            settings: JourneySettings {
                has_logo: logo,
                ..JourneySettings::default()
            },
            retention_days: 30,
        }
    }

    fn brand_of(company: &JourneyCompany) -> Markup {
        brand(company, "/v/tok/logo")
    }

    fn form_page(t: &Strings, mode: Mode, category: DocumentCategory) -> String {
        let company = company(false);
        let notice = privacy::notice(Lang::Fr, &company, category);
        let page = FormPage {
            mode,
            category,
            brand: brand_of(&company),
            intro: t.intro_identity,
            notice: &notice,
            config: "{}",
            end: &end(None),
            handoff: "<svg data-testid=\"journey-handoff-qr\"></svg>",
            action: "/v/tok",
            csrf: "csrf-token",
            states: &SideStates::default(),
            message: None,
        };
        form(t, &page).into_string()
    }

    #[test]
    fn an_ended_session_gives_its_reference_and_the_way_back_only_when_there_is_one() {
        let t = Lang::Fr.strings();
        let url = "https://banque.example/retour?a=1&b=\"2\"";
        let brand = || brand_of(&company(false));
        let page = ended(t, Mode::Live, brand(), t.expired_title, t.expired_text, &end(Some(url))).into_string();
        assert!(page.contains("data-testid=\"journey-reference\""), "{page}");
        assert!(page.contains("3F2A-91BC"), "{page}");
        assert!(
            page.contains("href=\"https://banque.example/retour?a=1&amp;b=&quot;2&quot;\" data-testid=\"journey-return-link\""),
            "escaped, and so exactly the URL once parsed: {page}"
        );
        assert!(page.contains("Banque &lt;Exemple&gt; SA"), "the company's name, escaped: {page}");
        let page = ended(t, Mode::Live, brand(), t.used_title, t.used_text, &end(None)).into_string();
        assert!(page.contains("3F2A-91BC") && !page.contains("journey-return-link"), "{page}");
    }

    #[test]
    fn the_brand_shows_the_logo_only_when_there_is_one_and_the_workflow_name_first() {
        assert!(!brand_of(&company(false)).into_string().contains("journey-logo"));
        let mut with_logo = company(true);
        let page = brand_of(&with_logo).into_string();
        assert!(
            page.contains("<img class=\"logo\" src=\"/v/tok/logo\" alt=\"\" data-testid=\"journey-logo\">"),
            "{page}"
        );
        with_logo.workflow_display_name = Some(DisplayName::parse("Crédit Exemple").unwrap());
        assert!(brand_of(&with_logo).into_string().contains(">Crédit Exemple</p>"));
    }

    #[test]
    fn only_a_page_that_waits_reloads_itself_without_script() {
        let t = Lang::Fr.strings();
        let head = |refresh| Head {
            title: "t",
            csrf: None,
            script: true,
            theme: None,
            refresh_without_script: refresh,
        };
        let waiting = document(t, &head(true), html! {}).into_string();
        assert!(
            waiting.contains("<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>"),
            "{waiting}"
        );
        assert!(!document(t, &head(false), html! {}).into_string().contains("refresh"));
    }

    #[test]
    fn the_accent_reaches_the_stylesheet_only_as_a_checked_colour() {
        assert_eq!(
            theme(AccentColor::parse("#FFE600").unwrap()),
            ":root{--accent:#ffe600;--on-accent:#111111}"
        );
    }

    #[test]
    fn interpolations_are_escaped_and_the_configuration_cannot_close_its_element() {
        let t = Lang::Fr.strings();
        let head = Head {
            title: "<b>x</b>",
            csrf: Some("\"><script>"),
            script: false,
            theme: None,
            refresh_without_script: false,
        };
        let page = document(t, &head, message("<i>", "a & b")).into_string();
        assert!(page.contains("<title>&lt;b&gt;x&lt;/b&gt;</title>"), "{page}");
        assert!(page.contains("content=\"&quot;&gt;&lt;script&gt;\""), "{page}");
        assert!(page.contains("<h1>&lt;i&gt;</h1><p>a &amp; b</p>"), "{page}");
        assert!(!page.contains("<script>"), "no script on a message page");
        let config = configuration(r#"{"t":"</script><script>alert(1)"}"#).into_string();
        assert_eq!(config.matches("</script>").count(), 1, "{config}");
    }

    #[test]
    fn the_form_asks_for_each_file_of_the_category_after_the_privacy_notice() {
        let t = Lang::En.strings();
        let page = form_page(t, Mode::Live, DocumentCategory::Identite);
        assert!(!page.contains("journey-test-mode"), "a live session says nothing of test mode");
        for id in ["front", "back", "selfie"] {
            assert!(
                page.contains(&format!("<input type=\"file\" id=\"{id}\" name=\"{id}\"")),
                "{id}: {page}"
            );
        }
        assert!(page.contains("capture=\"user\""));
        assert_eq!(page.matches(" required aria-required=\"true\"").count(), 2, "back is optional");
        assert!(!page.contains("id=\"document\""));
        let notice = page.find("data-testid=\"journey-privacy\"").expect("the notice");
        assert!(notice < page.find("type=\"file\"").unwrap(), "before any upload");
        assert_eq!(page.matches("<svg class=\"framing\"").count(), 3, "a drawing per file: {page}");
        for advice in [t.advice_front, t.advice_back, t.advice_selfie] {
            assert!(page.contains(advice), "{advice}");
        }
    }

    #[test]
    fn a_test_session_says_so_first_on_its_form_and_while_it_is_checked() {
        let t = Lang::Fr.strings();
        let form = form_page(t, Mode::Test, DocumentCategory::Administratif);
        let checking = checking(t, Mode::Test, brand_of(&company(false)), "{}", &end(None)).into_string();
        let ended = ended(t, Mode::Test, brand_of(&company(false)), t.used_title, t.used_text, &end(None)).into_string();
        for page in [form, checking, ended] {
            let banner = page.find("data-testid=\"journey-test-mode\"").expect("the banner");
            assert!(page[banner..].contains("TEST — Parcours de test"), "{page}");
            assert!(page.find("<h1").is_none_or(|title| banner < title), "before anything else: {page}");
        }
    }
}
