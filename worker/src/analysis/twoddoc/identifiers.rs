//! The data identifiers of spec §7 (perimeter `01`) with their length rules, so the message parser knows
//! where each value ends: fixed lengths are read exactly, variable ones end at their maximum or at a
//! separator. The table ships in `worker/data/2ddoc/data-identifiers-v3.2.6.tsv` (checked against the PDF).

use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The identifier table as shipped: `id  min  max  type  label`, `#` comments, `max = -1` for unbounded.
const TABLE_TSV: &str = include_str!("../../../data/2ddoc/data-identifiers-v3.2.6.tsv");

/// One data identifier and the length its value must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataIdentifier {
    pub id: String,
    pub min: usize,
    /// `None` when the specification sets no maximum ("Aucune").
    pub max: Option<usize>,
    /// The specification's type column (Alphanumérique, Numérique…), informative only.
    pub kind: String,
    pub label: String,
}

impl DataIdentifier {
    /// The exact length of a fixed-length field (minimum equals maximum).
    pub fn fixed_len(&self) -> Option<usize> {
        (self.max == Some(self.min)).then_some(self.min)
    }

    /// The allowed lengths, as shown in error messages.
    pub fn allowed(&self) -> String {
        match (self.fixed_len(), self.max) {
            (Some(n), _) => format!("exactly {n}"),
            (None, Some(max)) => format!("{} to {max}", self.min),
            (None, None) => format!("at least {}", self.min),
        }
    }
}

/// The parsed table, with the lines that did not parse (a test keeps that list empty).
struct Table {
    by_id: BTreeMap<String, DataIdentifier>,
    rejected: Vec<String>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| parse_table(TABLE_TSV));

/// The identifier `id` of perimeter `01`, if the specification defines it.
pub fn lookup(id: &str) -> Option<&'static DataIdentifier> {
    TABLE.by_id.get(id)
}

/// Every identifier of the table, in identifier order.
pub fn all() -> impl Iterator<Item = &'static DataIdentifier> {
    TABLE.by_id.values()
}

fn parse_table(text: &str) -> Table {
    let mut table = Table {
        by_id: BTreeMap::new(),
        rejected: Vec::new(),
    };
    let rows = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with("id\t"));
    for line in rows {
        match parse_row(line) {
            Some(row) => {
                table.by_id.insert(row.id.clone(), row);
            }
            None => table.rejected.push(line.to_string()),
        }
    }
    table
}

fn parse_row(line: &str) -> Option<DataIdentifier> {
    let mut cols = line.split('\t');
    let id = cols.next()?.trim();
    let min = cols.next()?.trim().parse::<usize>().ok()?;
    let max = match cols.next()?.trim() {
        "-1" => None,
        n => Some(n.parse::<usize>().ok()?),
    };
    let valid_id = id.len() == 2 && id.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if !valid_id || max.is_some_and(|m| m < min) {
        return None;
    }
    let kind = cols.next().unwrap_or_default().trim().to_string();
    let label = cols.next().unwrap_or_default().trim().to_string();
    Some(DataIdentifier {
        id: id.to_string(),
        min,
        max,
        kind,
        label,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_table_parses() {
        assert!(TABLE.rejected.is_empty(), "rejected rows: {:?}", TABLE.rejected);
        // 337 identifiers in spec v3.2.6 §7 (the TSV was cross-checked against the PDF text, row by row).
        assert_eq!(all().count(), 337);
    }

    #[test]
    fn spot_checks_against_the_pdf() {
        // Values read in the PDF (§7): postcode 24 fixed 5, IBAN 31 from 14 to 38, URL 0C unbounded, 94 up to
        // 38 since v3.0.7, 65 (identity document type) fixed 2.
        let rule = |id: &str| lookup(id).map(|d| (d.min, d.max));
        assert_eq!(rule("24"), Some((5, Some(5))));
        assert_eq!(rule("31"), Some((14, Some(38))));
        assert_eq!(rule("0C"), Some((0, None)));
        assert_eq!(rule("94"), Some((0, Some(38))));
        assert_eq!(rule("65"), Some((2, Some(2))));
        assert_eq!(rule("BK"), Some((14, Some(14))));
        assert_eq!(lookup("24").and_then(DataIdentifier::fixed_len), Some(5));
        assert_eq!(lookup("31").and_then(DataIdentifier::fixed_len), None);
        assert_eq!(lookup("ZZ"), None);
        assert_eq!(lookup("24").map(DataIdentifier::allowed).as_deref(), Some("exactly 5"));
        assert_eq!(lookup("0C").map(DataIdentifier::allowed).as_deref(), Some("at least 0"));
    }

    #[test]
    fn bad_rows_are_rejected_not_guessed() {
        let t = parse_table("# c\nid\tmin\tmax\n24\t5\t5\tN\tcp\nzz\t0\t1\nAB\tx\t3\nAC\t5\t3\n");
        assert_eq!(t.by_id.len(), 1);
        assert_eq!(t.rejected.len(), 3);
    }
}
