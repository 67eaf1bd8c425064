//! The portal's CSV exports: RFC 4180 through the `csv` crate, and cells that a spreadsheet would
//! run as a formula (`=`, `+`, `-`, `@`, tab, CR) prefixed with `'`, so an exported value typed by
//! someone else (an external ref, a target) never executes when opened.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

pub struct Writer {
    inner: csv::Writer<Vec<u8>>,
}

impl Writer {
    pub fn new(headers: &[&str]) -> Writer {
        let mut w = Writer {
            inner: csv::Writer::from_writer(Vec::new()),
        };
        w.row(headers);
        w
    }

    pub fn row(&mut self, cells: &[&str]) {
        let safe: Vec<String> = cells.iter().map(|c| defuse(c)).collect();
        // Writing to a Vec cannot fail.
        let _ = self.inner.write_record(&safe);
    }

    fn into_bytes(self) -> Vec<u8> {
        self.inner.into_inner().unwrap_or_default()
    }
}

fn defuse(cell: &str) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell.to_owned(),
    }
}

/// The export as a download named `name`, never cached.
pub fn download(writer: Writer, name: &str) -> Response {
    let mut response = writer.into_bytes().into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Cells are client text: opened in a tab, the file gets no script and no same-origin rights.
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_defused_and_quotes_escaped() {
        let mut w = Writer::new(&["a", "b"]);
        w.row(&["=HYPERLINK(\"x\")", "plain, with comma"]);
        let text = String::from_utf8(w.into_bytes()).unwrap();
        assert_eq!(text, "a,b\n\"'=HYPERLINK(\"\"x\"\")\",\"plain, with comma\"\n");
    }
}
