//! `sceau client listen`, the integrator's local webhook receiver, through the real binary: a real
//! delivery from the service is verified, printed and forwarded; a forged one is refused.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use support::receiver::Receiver;
use support::{Service, BIN};

const WAIT: Duration = Duration::from_secs(20);

/// The listener's output, line by line, read on a thread of its own.
struct Listening {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    url: String,
}

impl Listening {
    fn start(secret: &str, forward: &str) -> Listening {
        let mut child = Command::new(BIN)
            .args(["client", "listen", "--secret", secret, "--port", "0", "--forward", forward])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start sceau client listen");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let first = lines.recv_timeout(WAIT).expect("the listener announces its address");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        Listening { child, lines, url }
    }

    /// Lines printed until one contains `needle`.
    fn until(&self, needle: &str) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(WAIT) {
            let found = line.contains(needle);
            seen.push(line);
            if found {
                return seen;
            }
        }
        panic!("{needle:?} never printed; saw {seen:?}");
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// Two threads: the test blocks on the listener's output while the forwarding target, served by this
// runtime, must answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_delivery_is_verified_printed_and_forwarded_and_a_forged_one_refused() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let forwarded_to = Receiver::start(&co.secret, &[]).await;
    let listening = Listening::start(&co.secret, &forwarded_to.url);
    let wf = svc.admin(&[
        "workflow",
        "create",
        "--company",
        &co.id,
        "--name",
        "Onboarding",
        "--category",
        "identite",
        "--webhook-url",
        &listening.url,
    ]);
    let sent = svc.admin(&["workflow", "test-webhook", wf["id"].as_str().unwrap()]);
    let event_id = sent["eventId"].as_str().unwrap();

    let printed = listening.until("→ forwarded");
    assert!(printed.iter().any(|l| l.starts_with("✔ verification.test ")), "{printed:?}");
    assert!(
        printed.iter().any(|l| l.contains(event_id)),
        "the event's body is printed: {printed:?}"
    );
    assert!(
        printed.iter().any(|l| l.contains("204 No Content") || l.contains(": 2")),
        "{printed:?}"
    );
    let got = forwarded_to.wait_for(1, WAIT).await;
    assert!(got[0].signature_valid, "forwarded with the headers it was signed with");
    assert_eq!(got[0].body["eventId"], event_id);

    // The service records the delivery as delivered: the listener answered 2xx.
    support::eventually(WAIT, "the delivery is recorded", || async {
        svc.admin(&["webhook", "list", "--company", &co.id])["data"][0]["status"] == "delivered"
    })
    .await;

    // A delivery signed with another secret is refused, and said so.
    let forged = svc
        .http
        .post(&listening.url)
        .header("webhook-id", "msg_forged")
        .header("webhook-timestamp", chrono::Utc::now().timestamp().to_string())
        .header("webhook-signature", "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        .body(r#"{"event":"batch.completed"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401);
    let printed = listening.until("msg_forged");
    assert!(printed.last().unwrap().starts_with("✘ refused msg_forged"), "{printed:?}");
    assert_eq!(forwarded_to.received().len(), 1, "a refused delivery is not forwarded");
}
