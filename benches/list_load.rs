//! The client side of `scripts/bench --list`: `GET /api/v1/consultations` under an open-loop
//! load, one case after another. Python cannot send 1,000 requests a second with accurate times,
//! and a closed loop (send when answered) hides queueing: here a pacer thread fixes each send
//! time in advance and every latency is counted from that time, not from when the request
//! finally went out (no coordinated omission).
//!
//!   cargo bench --bench list_load -- BASE_URL API_KEY RATE SECONDS NAME=PATH...
//!
//! A PATH of `deep:N` is the unfiltered list's page N rows down, reached by following
//! `nextCursor` 100 rows at a time before the case starts. Prints one JSON line: per case its
//! path, the requests planned and measured, p50, p99 and the slowest (milliseconds, null past
//! what was measured when the case stopped saturated), and any non-200 answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

/// Load sent before each case's measured part: connections opened, caches warm.
const WARM_UP: Duration = Duration::from_millis(500);

/// Requests waiting for their answer at which a case stops: the service is saturated, and its
/// p99 is past anything worth measuring.
const SATURATED: usize = 200;

/// One measured case.
struct Case {
    name: String,
    path: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [base, key, rate, seconds, cases @ ..] = args.as_slice() else {
        return Err("usage: list_load BASE_URL API_KEY RATE SECONDS NAME=PATH...".into());
    };
    let (rate, seconds): (f64, f64) = (rate.parse()?, seconds.parse()?);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    // reqwest is built without a default TLS provider here; plain HTTP still asks for one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(10))
        .build()?;
    let mut results = Vec::new();
    for case in cases {
        let (name, path) = case.split_once('=').ok_or("a case is NAME=PATH")?;
        let path = match path.strip_prefix("deep:") {
            Some(rows) => runtime.block_on(deep_page(&client, base, key, rows.parse()?))?,
            None => path.to_owned(),
        };
        let case = Case {
            name: name.to_owned(),
            path,
        };
        let measured = run_case(&runtime, &client, base, key, &case, rate, Duration::from_secs_f64(seconds))?;
        if measured["saturated"] == true {
            // The service still works through what the client gave up on: the next case would
            // measure that backlog.
            runtime.block_on(settle(&client, base, key))?;
        }
        results.push(measured);
    }
    println!("{}", serde_json::json!({ "rate": rate, "seconds": seconds, "cases": results }));
    Ok(())
}

/// Waits until an unfiltered page is answered within 20 ms again (two minutes at most).
async fn settle(client: &reqwest::Client, base: &str, key: &str) -> Result<(), Box<dyn std::error::Error>> {
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(120) {
        let sent = Instant::now();
        let answered = client
            .get(format!("{base}/api/v1/consultations?limit=1"))
            .bearer_auth(key)
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        if answered.is_ok() && sent.elapsed() < Duration::from_millis(20) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err("the service was still busy two minutes after a saturated case".into())
}

/// The path of the unfiltered page `rows` results down, as a client paging through gets it.
async fn deep_page(client: &reqwest::Client, base: &str, key: &str, rows: usize) -> Result<String, Box<dyn std::error::Error>> {
    let mut path = "/api/v1/consultations?limit=100".to_owned();
    for _ in 0..rows.div_ceil(100) {
        let page: serde_json::Value = client
            .get(format!("{base}{path}"))
            .bearer_auth(key)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let cursor = page["nextCursor"].as_str().ok_or("the list ended before that depth")?;
        path = format!("/api/v1/consultations?cursor={cursor}");
    }
    Ok(path)
}

/// Sends `case` at `rate` for the warm-up then `length`, each request at its planned time, and
/// returns the latencies of the measured part.
fn run_case(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    base: &str,
    key: &str,
    case: &Case,
    rate: f64,
    length: Duration,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let interval = Duration::from_secs_f64(1.0 / rate);
    let total = ((WARM_UP + length).as_secs_f64() * rate) as u64;
    let warm_up = (WARM_UP.as_secs_f64() * rate) as u64;
    let (planned_tx, mut planned) = tokio::sync::mpsc::unbounded_channel::<(u64, Instant)>();
    // The pacer: a thread of its own sleeping to each planned time (the runtime's timer ticks by
    // the millisecond, as coarse as what is measured), never waiting for an answer.
    let start = Instant::now() + Duration::from_millis(20);
    let pacer = std::thread::spawn(move || {
        for i in 0..total {
            let at = start + interval.mul_f64(i as f64);
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            if planned_tx.send((i, at)).is_err() {
                return;
            }
        }
    });
    let url = Arc::new(format!("{base}{}", case.path));
    let answers = runtime.block_on(async {
        let mut requests = tokio::task::JoinSet::new();
        let mut answers = Vec::with_capacity(total as usize);
        while let Some((i, at)) = planned.recv().await {
            let (client, url, key) = (client.clone(), url.clone(), key.to_owned());
            requests.spawn(async move {
                let status = match client.get(url.as_str()).bearer_auth(key).send().await {
                    // The whole body, as a client reads it.
                    Ok(response) => {
                        let status = response.status().as_u16();
                        response.bytes().await.map_or(0, |_| status)
                    }
                    Err(_) => 0,
                };
                (i, at.elapsed(), status)
            });
            // Finished requests are collected as they come, so the set stays small.
            while let Some(done) = requests.try_join_next() {
                answers.push(done.expect("a request task panicked"));
            }
            if requests.len() > SATURATED {
                // The service no longer keeps up: the rest would only queue behind.
                break;
            }
        }
        let saturated = requests.len() > SATURATED;
        drop(planned);
        while let Some(done) = requests.join_next().await {
            answers.push(done.expect("a request task panicked"));
        }
        (answers, saturated)
    });
    let (answers, saturated) = answers;
    pacer.join().map_err(|_| "the pacer panicked")?;
    let planned = total - warm_up;
    let measured: Vec<_> = answers.into_iter().filter(|(i, _, _)| *i >= warm_up).collect();
    let errors = measured.iter().filter(|(_, _, status)| *status != 200).count();
    let mut latencies: Vec<f64> = measured.iter().map(|(_, d, _)| d.as_secs_f64() * 1000.0).collect();
    latencies.sort_by(f64::total_cmp);
    // Over every planned request: one never sent (the case stopped saturated) is slower than all.
    let at = |q: u64| latencies.get((planned * q / 100) as usize).copied();
    Ok(serde_json::json!({
        "name": case.name,
        "path": case.path,
        "planned": planned,
        "requests": latencies.len(),
        "saturated": saturated,
        "p50_ms": at(50),
        "p99_ms": at(99),
        "max_ms": if saturated { None } else { latencies.last().copied() },
        "errors": errors,
    }))
}
