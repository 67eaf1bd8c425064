//! `sceau ops status`: the state of the pool at a glance, as a table or `--json`.

use super::Ctx;
use crate::output;
use common::redis::deadlines::RedisDeadlines;
use common::redis::flags::RedisFlags;
use common::redis::presence;
use serde_json::json;
use std::process::ExitCode;

pub async fn run(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let queues = ctx.amqp.queue_stats().await?;
    let processes = presence::list(&ctx.redis).await?;
    let unacked = |queue: &str| processes.iter().map(|p| p.held.get(queue).copied().unwrap_or(0)).sum::<usize>();
    let workers: Vec<_> = processes.iter().filter(|p| p.role == "worker").collect();
    let draining = RedisFlags::new(ctx.redis.clone()).draining().await?;
    let oldest = RedisDeadlines::new(ctx.redis.clone()).oldest().await?;
    let held: usize = workers.iter().map(|w| w.in_flight).sum();
    let others: Vec<String> = processes
        .iter()
        .filter(|p| p.role != "worker")
        .map(|p| format!("{} ({})", p.role, p.id))
        .collect();
    if ctx.json {
        let value = json!({
            "queues": queues.iter().map(|q| json!({ "name": q.name, "ready": q.ready, "unacked": unacked(&q.name), "consumers": q.consumers })).collect::<Vec<_>>(),
            "processes": processes,
            "workers": workers,
            "jobsInFlight": held,
            "draining": draining,
            "oldestDeadline": oldest.as_ref().map(|(batch, at)| json!({ "batchId": batch, "dueAt": domain::time::format(*at) })),
            "deadLetters": queues.iter().filter(|q| q.name.ends_with(".dead")).map(|q| q.ready).sum::<u32>(),
        });
        return Ok(output::print(true, &value));
    }
    println!("{:<22} {:>8} {:>8} {:>10}", "QUEUE", "READY", "UNACKED", "CONSUMERS");
    for q in &queues {
        println!("{:<22} {:>8} {:>8} {:>10}", q.name, q.ready, unacked(&q.name), q.consumers);
    }
    println!();
    println!("{:<40} {:>12} {:>10} {:>9}", "WORKER", "CONCURRENCY", "IN FLIGHT", "DRAINING");
    for w in &workers {
        println!(
            "{:<40} {:>12} {:>10} {:>9}",
            format!("{}@{}", w.id, w.host),
            w.concurrency,
            w.in_flight,
            w.draining
        );
    }
    println!(
        "other processes: {}",
        if others.is_empty() { "-".into() } else { others.join(", ") }
    );
    println!();
    println!("draining: {draining}");
    println!("jobs in flight: {held}");
    match oldest {
        Some((batch, at)) => println!("oldest pending deadline: {} ({batch})", domain::time::format(at)),
        None => println!("oldest pending deadline: -"),
    }
    Ok(ExitCode::SUCCESS)
}
