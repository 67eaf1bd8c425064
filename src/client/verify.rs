//! `sceau client verify`: creates a verification session for a workflow and shows its link as text
//! and as a QR code in the terminal, to open the journey on a phone at once.

use super::api::Api;
use crate::output;
use qrcode::{Color, QrCode};
use serde_json::json;
use std::io::Write as _;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The workflow the session follows (`WFL-…`).
    #[arg(long)]
    workflow: String,
    /// Your reference for the session (a file number), returned in its results and events.
    #[arg(long = "ref")]
    external_ref: Option<String>,
}

pub async fn run(args: VerifyArgs) -> ExitCode {
    let api = match Api::from_env() {
        Ok(api) => api,
        Err(e) => return output::fail(&e.to_string()),
    };
    let request = json!({ "workflowId": args.workflow, "externalRef": args.external_ref });
    let key = uuid::Uuid::new_v4().to_string();
    let session = match api.post("/api/v1/verifications", &request, &key).await {
        Ok(session) => session,
        Err(e) => return output::fail(&format!("the session was not created: {e}")),
    };
    let (Some(id), Some(url)) = (session["id"].as_str(), session["verificationUrl"].as_str()) else {
        return output::fail("the service answered without a session id or link");
    };
    let code = match QrCode::new(url.as_bytes()) {
        Ok(code) => code,
        Err(e) => return output::fail(&format!("cannot draw the link as a QR code: {e}")),
    };
    let expires = session["expiresAt"].as_str().unwrap_or("?");
    // A reader that closes early (`| head`) is not an error of the command.
    let _ = writeln!(std::io::stdout().lock(), "{id}, expires {expires}\n{url}\n{}", half_blocks(&code));
    ExitCode::SUCCESS
}

/// The code in Unicode half blocks, two modules a character: light modules and the two-module quiet
/// zone drawn as blocks, dark ones left to the background, which reads right on a dark terminal
/// (phone scanners also read the inverse a light theme shows).
fn half_blocks(code: &QrCode) -> String {
    const QUIET: usize = 2;
    let width = code.width();
    let colors = code.to_colors();
    let dark = |x: usize, y: usize| {
        (QUIET..QUIET + width).contains(&x)
            && (QUIET..QUIET + width).contains(&y)
            && colors[(y - QUIET) * width + (x - QUIET)] == Color::Dark
    };
    let side = width + 2 * QUIET;
    let mut out = String::new();
    for y in (0..side).step_by(2) {
        for x in 0..side {
            out.push(match (dark(x, y), dark(x, y + 1)) {
                (true, true) => ' ',
                (true, false) => '▄',
                (false, true) => '▀',
                (false, false) => '█',
            });
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_is_drawn_once_light_as_a_block() {
        let code = QrCode::new(b"https://sceau.example/v/abc").unwrap();
        let drawn = half_blocks(&code);
        let rows: Vec<&str> = drawn.lines().collect();
        let side = code.width() + 4;
        assert_eq!(rows.len(), side.div_ceil(2));
        assert!(rows.iter().all(|r| r.chars().count() == side));
        // The quiet zone is light: full blocks all round.
        assert!(rows[0].chars().all(|c| c == '█'));
    }
}
