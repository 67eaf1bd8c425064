//! The journey's HTML as maud templates: every interpolation is escaped unless marked otherwise,
//! and only the page's own CSS, JS and JSON configuration are (the JSON with `<` escaped so no
//! value can close its element).

use super::assets::{CSS, JS};
use crate::i18n::journey::Strings;
use common::document::accept_attribute;
use common::domain::{DocumentCategory, JourneySide, Mode};
use common::journey::JourneyFile;
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// A whole page: `csrf` is the session's token for the script's writes, `script` whether the
/// page runs the journey's script.
pub fn document(t: &Strings, title: &str, csrf: Option<&str>, body: Markup, script: bool) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(t.code) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta name="robots" content="noindex";
                @if let Some(csrf) = csrf {
                    meta name="csrf-token" content=(csrf);
                }
                title { (title) " — Sceau" }
                style { (PreEscaped(CSS)) }
            }
            body {
                main { (body) }
                @if script {
                    script { (PreEscaped(JS)) }
                }
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
pub fn ended(t: &Strings, mode: Mode, title: &str, text: &str, end: &End<'_>) -> Markup {
    html! {
        (test_banner(t, mode))
        (message(title, text))
        (way_back(t, end))
    }
}

/// The capture form, its later states and the script's configuration.
pub fn form(t: &Strings, mode: Mode, category: DocumentCategory, intro: &str, config: &str, end: &End<'_>) -> Markup {
    html! {
        (test_banner(t, mode))
        form id="journey" novalidate {
            h1 id="journey-title" tabindex="-1" { (t.title) }
            p { (intro) }
            @for file in JourneySide::of(category) {
                @if file.side == JourneySide::Selfie {
                    (consent_step(t))
                }
                (side_step(t, category, *file))
            }
            p.msg id="form-msg" role="alert" {}
            button type="submit" id="submit" { (t.submit) }
            p.small { (t.privacy) }
        }
        (after_sections(t, true, end))
        (configuration(config))
    }
}

/// A submitted session: the "being checked" state, then the thank-you.
pub fn checking(t: &Strings, mode: Mode, config: &str, end: &End<'_>) -> Markup {
    html! {
        (test_banner(t, mode))
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
fn side_step(t: &Strings, category: DocumentCategory, file: JourneyFile) -> Markup {
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
            p.hint id={ (id) "-hint" } { (t.file_hint(category)) }
            input type="file" id=(id) name=(id) accept=(accept_attribute(category)) capture=[capture]
                required[file.required] aria-required=[file.required.then_some("true")]
                aria-describedby={ (id) "-hint " (id) "-msg" };
            img.preview id={ (id) "-preview" } alt="" hidden;
            progress id={ (id) "-progress" } max="100" value="0" aria-label=(t.progress) hidden {}
            p.msg id={ (id) "-msg" } role="status" aria-live="polite" {}
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
    use crate::i18n::Lang;

    fn end(return_url: Option<&str>) -> End<'_> {
        End {
            reference: "3F2A-91BC".into(),
            return_url,
        }
    }

    #[test]
    fn an_ended_session_gives_its_reference_and_the_way_back_only_when_there_is_one() {
        let t = Lang::Fr.strings();
        let url = "https://banque.example/retour?a=1&b=\"2\"";
        let page = ended(t, Mode::Live, t.expired_title, t.expired_text, &end(Some(url))).into_string();
        assert!(page.contains("data-testid=\"journey-reference\""), "{page}");
        assert!(page.contains("3F2A-91BC"), "{page}");
        assert!(
            page.contains("href=\"https://banque.example/retour?a=1&amp;b=&quot;2&quot;\" data-testid=\"journey-return-link\""),
            "escaped, and so exactly the URL once parsed: {page}"
        );
        let page = ended(t, Mode::Live, t.used_title, t.used_text, &end(None)).into_string();
        assert!(page.contains("3F2A-91BC") && !page.contains("journey-return-link"), "{page}");
    }

    #[test]
    fn interpolations_are_escaped_and_the_configuration_cannot_close_its_element() {
        let t = Lang::Fr.strings();
        let page = document(t, "<b>x</b>", Some("\"><script>"), message("<i>", "a & b"), false).into_string();
        assert!(page.contains("<title>&lt;b&gt;x&lt;/b&gt; — Sceau</title>"), "{page}");
        assert!(page.contains("content=\"&quot;&gt;&lt;script&gt;\""), "{page}");
        assert!(page.contains("<h1>&lt;i&gt;</h1><p>a &amp; b</p>"), "{page}");
        assert!(!page.contains("<script>"), "no script on a message page");
        let config = configuration(r#"{"t":"</script><script>alert(1)"}"#).into_string();
        assert_eq!(config.matches("</script>").count(), 1, "{config}");
    }

    #[test]
    fn the_form_asks_for_each_file_of_the_category() {
        let t = Lang::En.strings();
        let page = form(t, Mode::Live, DocumentCategory::Identite, t.intro_identity, "{}", &end(None)).into_string();
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
    }

    #[test]
    fn a_test_session_says_so_first_on_its_form_and_while_it_is_checked() {
        let t = Lang::Fr.strings();
        let form = form(t, Mode::Test, DocumentCategory::Administratif, t.intro_document, "{}", &end(None)).into_string();
        let checking = checking(t, Mode::Test, "{}", &end(None)).into_string();
        let ended = ended(t, Mode::Test, t.used_title, t.used_text, &end(None)).into_string();
        for page in [form, checking, ended] {
            let banner = page.find("data-testid=\"journey-test-mode\"").expect("the banner");
            assert!(page[banner..].contains("TEST — Parcours de test"), "{page}");
            assert!(page.find("<h1").is_none_or(|title| banner < title), "before anything else: {page}");
        }
    }
}
