"""`scripts/bench` with no arguments: every measure of the service in one run, one after another
on a quiet machine, each against its reference measured in the same run, summed up in one table
(or one JSON object with `--json`). Each part is `scripts/bench --<part> --json`, started as a
process of its own with a service of its own; its progress goes to stderr as it runs."""

import json
import os
import subprocess
import sys
import time

# (part, arguments): run in this order, the longest last so that a failure shows early.
PARTS = [
    ("ingest", ["--ingest"]),
    ("webhooks_embedded", ["--webhooks"]),
    ("webhooks_distributed", ["--webhooks", "--processes", "1"]),
    ("list", ["--list"]),
    ("purge", ["--purge"]),
    ("realtime", ["--realtime"]),
    ("scale", ["--scale"]),
]


def run_part(bench, arguments):
    """The part's JSON object (its last line on stdout), and the seconds it took."""
    began = time.monotonic()
    done = subprocess.run([sys.executable, bench, *arguments, "--json"], stdout=subprocess.PIPE, text=True)
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]), time.monotonic() - began
    except (IndexError, ValueError):
        # One part failing must not throw away the others' half hour: it is shown as failed.
        print(f"bench: scripts/bench {' '.join(arguments)} gave no figures (exit {done.returncode})", file=sys.stderr)
        return None, time.monotonic() - began


def row(area, figure, measured, reference, ratio, goal, met):
    return {"area": area, "figure": figure, "measured": measured, "reference": reference, "ratio": ratio, "goal": goal, "met": met}


def ingest_rows(ingest):
    goal = ingest["goal_ratio"]
    for size in ingest["sizes"]:
        yield row("ingest", f"deposit of {size['bytes'] // 1000} KB, {ingest['connections']} connections (ms/document)",
                  size["ingest_ms"], size["floor_ms"], size["ratio"], f"floor / ingest >= {goal}", size["ratio"] >= goal)


def realtime_rows(realtime):
    for mode, rows in realtime.items():
        on, off = rows["isolation on"], rows["isolation off"]
        for p in ("p50", "p95"):
            ratio = on[f"ratio_{p}"]
            yield row("journey latency", f"{mode}, {p} under a 200-document batch vs idle (ms)",
                      on[f"loaded_{p}_ms"], on[f"idle_{p}_ms"], ratio, "<= 1.2", ratio <= 1.2)
        yield row("batch throughput", f"{mode}, identity batch with the isolation on vs off (documents/s)",
                  on["batch_documents_per_s"], off["batch_documents_per_s"], rows["throughput_ratio"], ">= 0.9",
                  rows["throughput_ratio"] >= 0.9)


def face_rows(faces):
    ratio = faces["ratio_p50"]
    yield row("journey latency", "embedded, p50 with face match on vs off (ms)",
              faces["on"]["p50_ms"], faces["off"]["p50_ms"], ratio, "<= 1.5", ratio <= 1.5)


def scale_rows(scale):
    embedded = {r["kind"]: r["documents_per_s"] for r in scale["throughput"] if r["shape"] == "embedded"}
    for r in scale["throughput"]:
        if r["shape"] != "embedded":
            yield row("batch throughput", f"{r['kind']}, {r['shape']} vs embedded (documents/s)",
                      r["documents_per_s"], embedded[r["kind"]], r["ratio_to_embedded"], "", None)
    memory = scale["memory"]
    yield row("peak RSS", "gateway, 16 concurrent 10 MB deposits (MB)", memory["deposits_peak_rss_mb"], 200,
              memory["deposits_peak_rss_mb"] / 200, "<= 200 MB", memory["deposits_peak_rss_mb"] <= 200)
    if memory["worker_peak_rss_mb"] is not None:
        yield row("peak RSS", "worker, 200-document batch (MB)", memory["worker_peak_rss_mb"], 300,
                  memory["worker_peak_rss_mb"] / 300, "<= 300 MB", memory["worker_peak_rss_mb"] <= 300)


def list_rows(listing):
    goal = listing["goal_p99_ms"]
    for case in listing["cases"]:
        p99 = case["p99_ms"]
        met = p99 is not None and p99 <= goal and case["errors"] == 0
        yield row("results list", f"{case['name']}, p99 at {listing['rate']} requests/s (ms)",
                  p99, goal, None if p99 is None else p99 / goal, f"<= {goal} ms", met)


def webhook_rows(webhooks):
    goal = webhooks["goal_per_second"]
    yield row("webhooks", f"{webhooks['shape']}, deliveries/s vs a bare client",
              webhooks["per_second"], webhooks["reference_per_second"], webhooks["ratio"], f">= {goal}/s",
              webhooks["per_second"] >= goal)


def purge_rows(purge):
    yield row("retention purge", f"{purge['purged']:,} images purged vs unlinking as many files in one thread (s)",
              purge["seconds"], purge["floor_seconds"], purge["ratio"], "", None)
    yield row("retention purge", "API write p95 during the purge vs idle (ms)", purge["writes_during_p95_ms"],
              purge["writes_idle_p95_ms"], purge["writes_during_p95_ms"] / purge["writes_idle_p95_ms"], "", None)


def number(value):
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"


def main(bench, as_json):
    results, seconds = {}, {}
    for part, arguments in PARTS:
        print(f"bench: {part} …", file=sys.stderr, flush=True)
        results[part], seconds[part] = run_part(bench, arguments)
    makers = {
        "ingest": lambda r: ingest_rows(r["ingest"]),
        "webhooks_embedded": webhook_rows,
        "webhooks_distributed": webhook_rows,
        "list": list_rows,
        "purge": purge_rows,
        "realtime": lambda r: [*realtime_rows(r["realtime"]), *face_rows(r["face_match"])],
        "scale": lambda r: scale_rows(r["scale"]),
    }
    rows = []
    for part, _ in PARTS:
        if results[part] is None:
            rows.append(row(part, "no figures: the part failed (see above)", None, None, None, "", False))
        else:
            rows.extend(makers[part](results[part]))
    if as_json:
        print(json.dumps({"cores": os.cpu_count(), "seconds": seconds, "rows": rows, "parts": results}))
    else:
        print(f"Sceau, release build, {os.cpu_count()} cores; every reference measured in the same run")
        print()
        print("| area | figure | measured | reference | ratio | goal | met |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            met = "" if r["met"] is None else ("yes" if r["met"] else "**no**")
            print(f"| {r['area']} | {r['figure']} | {number(r['measured'])} | {number(r['reference'])} | {number(r['ratio'])} | {r['goal']} | {met} |")
        print()
        print("minutes per part: " + ", ".join(f"{part} {s / 60:.1f}" for part, s in seconds.items()))
    return 0 if all(r["met"] is not False for r in rows) else 1
