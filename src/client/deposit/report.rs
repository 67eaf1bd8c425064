//! The run's report: one row per file of the folder, in its order, with what became of it (the
//! batch item's status, or `refused` and why), and for an analysed document its verdict, decision
//! and consultation; written as CSV or as a JSON array.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// The CSV's columns, in order.
pub const COLUMNS: [&str; 8] = [
    "file",
    "batch_id",
    "item_id",
    "status",
    "error",
    "verdict",
    "decision",
    "consultation_id",
];

/// The status of a file the service never took.
pub const REFUSED: &str = "refused";

/// One file's line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub file: String,
    pub batch_id: String,
    pub item_id: String,
    pub status: String,
    pub error: String,
    pub verdict: String,
    pub decision: String,
    pub consultation_id: String,
}

impl Row {
    fn fields(&self) -> [&str; 8] {
        [
            &self.file,
            &self.batch_id,
            &self.item_id,
            &self.status,
            &self.error,
            &self.verdict,
            &self.decision,
            &self.consultation_id,
        ]
    }
}

/// Writes `rows` as CSV, with a header line.
pub fn write_csv(rows: &[Row], out: impl Write) -> Result<(), csv::Error> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(COLUMNS)?;
    for row in rows {
        writer.write_record(row.fields())?;
    }
    writer.flush()?;
    Ok(())
}

/// Writes `rows` as one JSON array with camelCase keys, and a line end.
pub fn write_json(rows: &[Row], mut out: impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, rows)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// "450 files: 448 succeeded, 2 refused", statuses by name.
pub fn counts(rows: &[Row]) -> String {
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for row in rows {
        *by_status.entry(&row.status).or_default() += 1;
    }
    let parts: Vec<String> = by_status.iter().map(|(status, n)| format!("{n} {status}")).collect();
    format!("{} files: {}", rows.len(), parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        vec![
            Row {
                file: "a, \"b\".png".into(),
                batch_id: "BAT-1".into(),
                item_id: "BTI-1".into(),
                status: "succeeded".into(),
                verdict: "conforme".into(),
                consultation_id: "CSL-1".into(),
                ..Row::default()
            },
            Row {
                file: "c.png".into(),
                status: REFUSED.into(),
                error: "invalid_document".into(),
                ..Row::default()
            },
        ]
    }

    #[test]
    fn csv_has_the_columns_and_one_quoted_row_per_file() {
        let mut out = Vec::new();
        write_csv(&rows(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "file,batch_id,item_id,status,error,verdict,decision,consultation_id");
        assert_eq!(lines[1], r#""a, ""b"".png",BAT-1,BTI-1,succeeded,,conforme,,CSL-1"#);
        assert_eq!(lines[2], "c.png,,,refused,invalid_document,,,");
        assert_eq!(lines.len(), 3);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let first = reader.records().next().unwrap().unwrap();
        assert_eq!(&first[0], "a, \"b\".png");
    }

    #[test]
    fn json_is_an_array_of_camel_case_rows() {
        let mut out = Vec::new();
        write_json(&rows(), &mut out).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value.as_array().unwrap().len(), 2);
        assert_eq!(value[0]["consultationId"], "CSL-1");
        assert_eq!(value[0]["batchId"], "BAT-1");
        assert_eq!(value[1]["error"], "invalid_document");
    }

    #[test]
    fn counts_name_each_status() {
        assert_eq!(counts(&rows()), "2 files: 1 refused, 1 succeeded");
    }
}
