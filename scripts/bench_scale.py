"""`scripts/bench --scale`: batch throughput by shape, and peak memory (issue 15, item 2).

- Batch throughput, documents/s from submit to `ended`, of identity photos (the passport sample) and
  of 2D-Doc PDFs (the invoice sample), embedded (`sceau serve`) and distributed with 1, 2 and 4
  worker processes (each with `SCEAU_WORKERS` slots, the machine's cores by default). The
  reference is the embedded figure of the same run: each shape's ratio to it.
- Peak RSS (VmHWM) of the service under 16 concurrent deposits of a 10 MB document (goal 200 MB at
  most), against its RSS before them; and of a worker process over a 200-document batch (goal 300 MB
  at most), with its largest analysis child beside it (children are separate processes, each
  bounded by its own address-space limit).
"""
import json
import os
import struct
import threading
import time
import zlib

from bench_service import BATCH_DOCUMENTS, Service, sample
from sceau_client import api, b64

SHAPES = (("embedded", 0), ("1 worker process", 1), ("2 worker processes", 2), ("4 worker processes", 4))
KINDS = (
    ("identity photo", "identite", "identite", "sample-passeport-td3-valide.jpg"),
    ("2D-Doc PDF", "administratif", "administratif", "sample-facture-v04.pdf"),
)
DEPOSIT_GOAL_MB = 200
WORKER_GOAL_MB = 300


def status_mb(pid, field):
    """A memory figure of /proc/<pid>/status (`VmHWM`: peak resident, `VmRSS`: resident), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return 0.0


def children_of(pid):
    """Process ids whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid):
            found.append(int(entry))
    return found


def noise_png(size):
    """A valid PNG of about `size` bytes of incompressible pixels (stored, not deflated)."""
    side = int((size / 3) ** 0.5)
    rows = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b"")


def throughput(binary, processes, category, file):
    service = Service(binary, processes, {})
    try:
        if category == "administratif":
            service.admin("company", "set", service.company, "--ai", "on")
        batch = service.batch(file, submit=False, category=category)
        began = time.monotonic()
        service.submit(batch)
        service.wait_ended(batch)
        rate = BATCH_DOCUMENTS / (time.monotonic() - began)
        worker_rss = None
        if processes:
            workers = service.pids("worker")
            worker_rss = (max(status_mb(p, "VmHWM") for p in workers), max((status_mb(c, "VmHWM") for p in workers for c in children_of(p)), default=0.0))
        return rate, worker_rss
    finally:
        service.stop()


def deposit_memory(binary):
    """Peak RSS of `sceau serve` before and after 16 concurrent 10 MB deposits."""
    service = Service(binary, 0, {})
    try:
        pid = service.pids("serve")[0]
        document = b64(noise_png(10_000_000 - 100_000))
        before = status_mb(pid, "VmRSS")
        _, batch = api(service.base, service.key, "POST", "/api/v1/batches", {"externalRef": "memory"})
        statuses = []

        def deposit():
            status, _ = api(service.base, service.key, "POST", f"/api/v1/batches/{batch['id']}/documents", {"documentCategory": "identite", "document": document})
            statuses.append(status)

        threads = [threading.Thread(target=deposit) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert statuses == [201] * 16, statuses
        return before, status_mb(pid, "VmHWM")
    finally:
        service.stop()


def main(binary, as_json):
    rates = {}
    worker_memory = None
    for kind, category, folder, name in KINDS:
        file = sample(folder, name)
        for shape, processes in SHAPES:
            rate, memory = throughput(binary, processes, category, file)
            rates[(kind, shape)] = rate
            if memory and kind == "identity photo" and processes == 1:
                worker_memory = memory
    before, peak = deposit_memory(binary)
    result = {
        "throughput": [
            {"kind": kind, "shape": shape, "documents_per_s": rates[(kind, shape)], "ratio_to_embedded": rates[(kind, shape)] / rates[(kind, "embedded")]}
            for kind, *_ in KINDS
            for shape, _ in SHAPES
        ],
        "memory": {
            "deposits_rss_before_mb": before,
            "deposits_peak_rss_mb": peak,
            "worker_peak_rss_mb": worker_memory[0] if worker_memory else None,
            "analysis_child_peak_rss_mb": worker_memory[1] if worker_memory else None,
        },
    }
    if as_json:
        print(json.dumps({"scale": result}))
    else:
        print(f"Batch of {BATCH_DOCUMENTS} documents, submit to ended ({os.cpu_count()} cores, SCEAU_WORKERS slots per process)")
        print("| documents | shape | documents/s | ratio to embedded |")
        print("|---|---|---|---|")
        for row in result["throughput"]:
            print(f"| {row['kind']} | {row['shape']} | {row['documents_per_s']:.1f} | {row['ratio_to_embedded']:.2f} |")
        m = result["memory"]
        print()
        print("| peak RSS | MB | goal |")
        print("|---|---|---|")
        print(f"| service, 16 concurrent 10 MB deposits (before: {m['deposits_rss_before_mb']:.0f} MB) | {m['deposits_peak_rss_mb']:.0f} | <= {DEPOSIT_GOAL_MB} |")
        print(f"| worker process, {BATCH_DOCUMENTS}-document identity batch | {m['worker_peak_rss_mb']:.0f} | <= {WORKER_GOAL_MB} |")
        print(f"| its largest analysis child | {m['analysis_child_peak_rss_mb']:.0f} | (bounded by its own limit) |")
    ok = result["memory"]["deposits_peak_rss_mb"] <= DEPOSIT_GOAL_MB and (worker_memory is None or worker_memory[0] <= WORKER_GOAL_MB)
    return 0 if ok else 1
