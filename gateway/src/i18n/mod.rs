//! Every word Sceau shows a person, in French (the default) and English, chosen by
//! `Accept-Language`: the journey's (`journey`), the certificate's and the pages' labels of the
//! API's vocabularies (`labels`), the authenticity page's (`authenticity`). Plain constants: two
//! languages do not warrant a catalogue format.

pub mod authenticity;
pub mod journey;
pub mod labels;
pub mod portal;
pub mod privacy;

use axum::http::{header, HeaderMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Fr,
    En,
}

impl Lang {
    /// The preferred of French and English in `Accept-Language` (by q-value, then order); French
    /// when neither is asked for.
    pub fn from_headers(headers: &HeaderMap) -> Lang {
        let Some(raw) = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()) else {
            return Lang::Fr;
        };
        let mut best: Option<(f32, Lang)> = None;
        for part in raw.split(',') {
            let mut pieces = part.split(';');
            let tag = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = pieces
                .find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.parse::<f32>().ok()))
                .unwrap_or(1.0);
            let lang = match tag.split('-').next() {
                Some("fr") => Lang::Fr,
                Some("en") => Lang::En,
                _ => continue,
            };
            if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, lang));
            }
        }
        best.map_or(Lang::Fr, |(_, l)| l)
    }

    /// The language's code, for `lang` and `Content-Language`.
    pub fn code(self) -> &'static str {
        self.strings().code
    }

    /// The journey's words in this language.
    pub fn strings(self) -> &'static journey::Strings {
        match self {
            Lang::Fr => &journey::FR,
            Lang::En => &journey::EN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lang;
    use axum::http::{header, HeaderMap, HeaderValue};

    fn lang(value: &str) -> Lang {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_str(value).unwrap());
        Lang::from_headers(&h)
    }

    #[test]
    fn french_unless_english_is_preferred() {
        assert_eq!(Lang::from_headers(&HeaderMap::new()), Lang::Fr);
        assert_eq!(lang("en"), Lang::En);
        assert_eq!(lang("en-GB,en;q=0.9"), Lang::En);
        assert_eq!(lang("de-DE,de;q=0.9"), Lang::Fr);
        assert_eq!(lang("fr-FR,fr;q=0.9,en;q=0.8"), Lang::Fr);
        assert_eq!(lang("de,en;q=0.5,fr;q=0.7"), Lang::Fr);
        assert_eq!(lang("de,fr;q=0.5,en;q=0.7"), Lang::En);
        assert_eq!(lang("de;q=0.5,en;q=0.9"), Lang::En);
        assert_eq!(lang("de"), Lang::Fr);
    }
}
