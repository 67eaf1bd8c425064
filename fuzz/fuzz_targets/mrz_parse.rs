//! Any text as MRZ lines: the parser returns a zone or an error, and the findings never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use worker::analysis::mrz;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines: Vec<&str> = text.lines().take(4).collect();
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 22).expect("date");
    if let Ok(zone) = mrz::parse_at(&lines, today) {
        let _ = mrz::findings(&zone, today);
    }
});
