//! The run's report: one row per file of the folder, in its order, with what became of it (the
//! batch item's status, or `refused` and why), and for an analysed document its verdict, decision
//! and consultation; written as CSV or as a JSON array.

use super::state::{Outcome, State};
use super::wait::{BatchView, Findings, ItemStatus, ItemView};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
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

/// What became of a file: its batch item's state, or what the client knows of a file the service
/// holds no item for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FileStatus {
    Item(ItemStatus),
    /// Refused, by the service or before sending: the row's `error` says why.
    Refused,
    /// No outcome recorded: the run stopped before this file.
    #[default]
    NotDeposited,
    /// Deposited, but its batch no longer lists the item.
    Unknown,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Item(status) => status.as_str(),
            FileStatus::Refused => "refused",
            FileStatus::NotDeposited => "not_deposited",
            FileStatus::Unknown => "unknown",
        }
    }
}

impl Serialize for FileStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One file's line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub file: String,
    pub batch_id: String,
    pub item_id: String,
    pub status: FileStatus,
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
            self.status.as_str(),
            &self.error,
            &self.verdict,
            &self.decision,
            &self.consultation_id,
        ]
    }
}

/// One row per file of the run, in its order.
pub fn rows(state: &State, batches: &[BatchView], findings: &HashMap<String, Findings>) -> Vec<Row> {
    let items: HashMap<&str, &ItemView> = batches.iter().flat_map(|b| &b.items).map(|i| (i.id.as_str(), i)).collect();
    let files = state.header.files.iter().enumerate();
    files
        .map(|(index, file)| {
            let mut row = Row {
                file: file.clone(),
                ..Row::default()
            };
            match state.outcomes.get(&index) {
                Some(Outcome::Deposited { k, item }) => {
                    row.batch_id = state.batches[*k].id.clone();
                    row.item_id = item.clone();
                    let view = items.get(item.as_str());
                    row.status = view.map_or(FileStatus::Unknown, |v| FileStatus::Item(v.status));
                    row.error = view.and_then(|v| v.error.clone()).unwrap_or_default();
                    row.consultation_id = view.and_then(|v| v.consultation_id.clone()).unwrap_or_default();
                    if let Some(found) = findings.get(&row.consultation_id) {
                        row.verdict = found.verdict.clone().unwrap_or_default();
                        row.decision = found.decision.clone().unwrap_or_default();
                    }
                }
                Some(Outcome::Refused { code }) => {
                    row.status = FileStatus::Refused;
                    row.error = code.clone();
                }
                None => row.status = FileStatus::NotDeposited,
            }
            row
        })
        .collect()
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
        *by_status.entry(row.status.as_str()).or_default() += 1;
    }
    let parts: Vec<String> = by_status.iter().map(|(status, n)| format!("{n} {status}")).collect();
    format!("{} files: {}", rows.len(), parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::state::{Event, DEFAULT_NAME};
    use super::super::wait::{BatchStatus, Counts};
    use super::*;

    fn rows() -> Vec<Row> {
        vec![
            Row {
                file: "a, \"b\".png".into(),
                batch_id: "BAT-1".into(),
                item_id: "BTI-1".into(),
                status: FileStatus::Item(ItemStatus::Succeeded),
                verdict: "conforme".into(),
                consultation_id: "CSL-1".into(),
                ..Row::default()
            },
            Row {
                file: "c.png".into(),
                status: FileStatus::Refused,
                error: "invalid_document".into(),
                ..Row::default()
            },
        ]
    }

    #[test]
    fn each_file_gets_its_row_from_the_state_the_items_and_the_findings() {
        let dir = std::env::temp_dir().join(format!("sceau-rows-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let names: Vec<String> = ["a.png", "b.txt", "c.png"].map(str::to_owned).to_vec();
        let mut state = State::open(&dir.join(DEFAULT_NAME), "identite", &names).unwrap();
        for event in [
            Event::BatchCreated {
                k: 0,
                id: "BAT-1".into(),
                first: 0,
            },
            Event::Deposited {
                index: 0,
                k: 0,
                item: "BTI-a".into(),
            },
            Event::Refused {
                index: 1,
                code: "invalid_document".into(),
            },
            Event::Deposited {
                index: 2,
                k: 0,
                item: "BTI-c".into(),
            },
        ] {
            state.record(event).unwrap();
        }
        let item = |id: &str, status: ItemStatus, consultation: Option<&str>, error: Option<&str>| ItemView {
            id: id.into(),
            status,
            consultation_id: consultation.map(str::to_owned),
            error: error.map(str::to_owned),
        };
        let batch = BatchView {
            id: "BAT-1".into(),
            status: BatchStatus::Ended,
            counts: Counts::default(),
            items: vec![
                item("BTI-c", ItemStatus::Errored, None, Some("unreadable_document")),
                item("BTI-a", ItemStatus::Succeeded, Some("CSL-a"), None),
            ],
        };
        let findings = HashMap::from([(
            "CSL-a".to_owned(),
            Findings {
                verdict: Some("conforme".into()),
                decision: None,
            },
        )]);
        let rows = super::rows(&state, &[batch], &findings);
        let fields: Vec<[&str; 6]> = rows
            .iter()
            .map(|r| [&*r.file, &r.batch_id, &r.item_id, r.status.as_str(), &r.error, &r.verdict])
            .collect();
        assert_eq!(
            fields,
            [
                ["a.png", "BAT-1", "BTI-a", "succeeded", "", "conforme"],
                ["b.txt", "", "", "refused", "invalid_document", ""],
                ["c.png", "BAT-1", "BTI-c", "errored", "unreadable_document", ""],
            ]
        );
        assert_eq!(rows[0].consultation_id, "CSL-a");
        std::fs::remove_dir_all(&dir).unwrap();
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
