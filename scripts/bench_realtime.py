"""`scripts/bench --realtime`: the real-time lane under batch load (issue 15, item 1).

A journey as a customer makes it (passport photo uploaded through the journey link, submit, then
the "being checked" page polled every 10 ms until the result is recorded) is timed from submit to
`completed`, first on an idle service, then while a 200-document identity batch is analysed. The
ratio of the two (p50 and p95) is the figure; the goal is 1.2 at most. Beside it, the batch's own
throughput (documents/s, submit to `ended`) with no journey running, with the isolation on and off
(`SCEAU_REALTIME_SLOTS=0 SCEAU_BATCH_NICE=0`), measured in the same run: the isolation may cost it
10 % at most. Both modes: embedded (`sceau serve`) and distributed (gateway, one worker process,
notifier, on the local RabbitMQ and Redis).

Then face match (issue 29, item 6): the journey of a card photographed on a table with a consenting
selfie (`tests/faces/`), idle, embedded, with the comparison off (`SCEAU_FACE_MATCH=false`) and on,
in the same run; the p50 with it on must stay within 1.5 times the p50 without.
"""
import os
import json
import statistics
import time

from bench_service import BATCH_DOCUMENTS, Service, sample

IDLE_JOURNEYS = 30
GOAL = 1.2
FACE_GOAL = 1.5
FACES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "faces")
THROUGHPUT_GOAL = 0.9


def quantiles(samples):
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def latency(service, photo):
    """Journey p50/p95 idle, then under the batch; and the batch's throughput meanwhile."""
    for _ in range(3):
        service.journey(photo)  # warm-up: children started, pages cached
    idle = [service.journey(photo) for _ in range(IDLE_JOURNEYS)]
    batch = service.batch(photo, submit=False)
    service.submit(batch)
    time.sleep(1.0)  # every slot busy with the batch first
    loaded = []
    while not service.ended(batch):
        loaded.append(service.journey(photo))
        time.sleep(0.1)
    service.wait_ended(batch)
    return quantiles(idle), quantiles(loaded), len(loaded)


def throughput(service, photo):
    """Documents per second of a batch alone, submit to `ended`."""
    batch = service.batch(photo, submit=False)
    began = time.monotonic()
    service.submit(batch)
    service.wait_ended(batch)
    return BATCH_DOCUMENTS / (time.monotonic() - began)


OFF = {"SCEAU_REALTIME_SLOTS": "0", "SCEAU_BATCH_NICE": "0"}


def measure(binary, distributed):
    photo = sample("identite", "sample-passeport-td3-valide.jpg")
    rows = {}
    for label, extra in (("isolation on", {}), ("isolation off", OFF)):
        service = Service(binary, 1 if distributed else 0, extra)
        try:
            idle, loaded, count = latency(service, photo)
            rate = throughput(service, photo)
        finally:
            service.stop()
        rows[label] = {
            "idle_p50_ms": idle[0] * 1000,
            "idle_p95_ms": idle[1] * 1000,
            "loaded_p50_ms": loaded[0] * 1000,
            "loaded_p95_ms": loaded[1] * 1000,
            "ratio_p50": loaded[0] / idle[0],
            "ratio_p95": loaded[1] / idle[1],
            "journeys_under_load": count,
            "batch_documents_per_s": rate,
        }
    rows["throughput_ratio"] = rows["isolation on"]["batch_documents_per_s"] / rows["isolation off"]["batch_documents_per_s"]
    return rows


def face_match(binary):
    """Idle journey p50/p95 with a face on the card and on the selfie, face match off then on."""
    with open(os.path.join(FACES, "cards", "obama-obama-yaw20.jpg"), "rb") as f:
        card = f.read()
    with open(os.path.join(FACES, "selfies", "obama2.jpg"), "rb") as f:
        selfie = f.read()
    rows = {}
    for label, setting in (("off", "false"), ("on", "true")):
        service = Service(binary, 0, {"SCEAU_FACE_MATCH": setting})
        try:
            for _ in range(3):
                service.journey(card, selfie, consent=True)
            p50, p95 = quantiles([service.journey(card, selfie, consent=True) for _ in range(IDLE_JOURNEYS)])
        finally:
            service.stop()
        rows[label] = {"p50_ms": p50 * 1000, "p95_ms": p95 * 1000}
    rows["ratio_p50"] = rows["on"]["p50_ms"] / rows["off"]["p50_ms"]
    return rows


def main(binary, as_json):
    results = {mode: measure(binary, mode == "distributed") for mode in ("embedded", "distributed")}
    faces = face_match(binary)
    if as_json:
        print(json.dumps({"realtime": results, "face_match": faces}))
    else:
        print(f"Journey (passport photo, submit to recorded), idle vs under a {BATCH_DOCUMENTS}-document identity batch; goal ratio <= {GOAL}")
        print("| mode | isolation | idle p50 ms | idle p95 ms | loaded p50 ms | loaded p95 ms | ratio p50 | ratio p95 | batch docs/s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for mode, rows in results.items():
            for label in ("isolation on", "isolation off"):
                r = rows[label]
                print(f"| {mode} | {label.removeprefix('isolation ')} | {r['idle_p50_ms']:.0f} | {r['idle_p95_ms']:.0f} | {r['loaded_p50_ms']:.0f} | {r['loaded_p95_ms']:.0f} | {r['ratio_p50']:.2f} | {r['ratio_p95']:.2f} | {r['batch_documents_per_s']:.1f} |")
            print(f"| {mode} | batch throughput, on / off | | | | | | | {rows['throughput_ratio']:.2f} (goal >= {THROUGHPUT_GOAL}) |")
        print()
        print(f"Journey with face match (card photo and consenting selfie, submit to recorded, idle, embedded); goal p50 on / off <= {FACE_GOAL}")
        print("| face match | p50 ms | p95 ms |")
        print("|---|---|---|")
        for label in ("off", "on"):
            print(f"| {label} | {faces[label]['p50_ms']:.0f} | {faces[label]['p95_ms']:.0f} |")
        print(f"| on / off | {faces['ratio_p50']:.2f} (goal <= {FACE_GOAL}) | |")
    ok = all(
        rows["isolation on"]["ratio_p50"] <= GOAL and rows["isolation on"]["ratio_p95"] <= GOAL and rows["throughput_ratio"] >= THROUGHPUT_GOAL
        for rows in results.values()
    ) and faces["ratio_p50"] <= FACE_GOAL
    return 0 if ok else 1
