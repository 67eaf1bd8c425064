#!/usr/bin/env python3
"""Test data for scripts/schemathesis: makes real resources on the running service (a finished
batch and its consultation, an open batch, verification sessions) and writes the part of a
schemathesis configuration that offers their ids (and real postal codes) to the operations that
take them, half the time. Without it every id schemathesis invents answers 404, so the logic behind them would go
untested.

  schemathesis_seed.py BASE_URL API_KEY WORKFLOW_ID > part-of-schemathesis.toml
"""
import json
import os
import re
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sceau_client import api, b64, png  # noqa: E402

# How often a bound parameter takes one of the real values rather than a generated one.
PROBABILITY = 0.5


def created(result, what):
    status, body = result
    if status not in (200, 201):
        sys.exit(f"error: seeding {what} answered {status}: {body}")
    return body


def main(base, key, workflow):
    # A batch analysed to the end: its one document becomes a consultation with an image and a
    # certificate.
    finished = created(api(base, key, "POST", "/api/v1/batches", {"externalRef": "schemathesis"}), "a batch")["id"]
    created(
        api(base, key, "POST", f"/api/v1/batches/{finished}/documents", {"documentCategory": "identite", "document": b64(png(40))}),
        "a deposit",
    )
    created(api(base, key, "POST", f"/api/v1/batches/{finished}/submit"), "a submit")
    deadline = time.monotonic() + 60
    while True:
        batch = created(api(base, key, "GET", f"/api/v1/batches/{finished}"), "a batch read")
        if batch["status"] != "in_progress":
            break
        if time.monotonic() > deadline:
            sys.exit(f"error: batch {finished} still in progress after 60 s")
        time.sleep(0.1)
    consultations = [item["consultationId"] for item in batch["items"] if item.get("consultationId")]
    if not consultations:
        sys.exit(f"error: batch {finished} ended without a consultation: {batch}")
    # The authenticity link of its certificate, which the PDF carries in clear (its link annotation).
    request = urllib.request.Request(f"{base}/api/v1/consultations/{consultations[0]}/certificate", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request) as certificate:
        link = re.search(rb"/authenticite/([A-Za-z0-9._-]+)", certificate.read())
    if not link:
        sys.exit("error: the certificate carries no authenticity link")
    # One batch left open, for deposits only: were it offered to cancel and submit too, it would
    # be closed at once. Those two reach their success through the batches schemathesis creates.
    open_batch = created(api(base, key, "POST", "/api/v1/batches", {}), "a batch")["id"]
    # Verification sessions: the first for the journey's writes, which need the CSRF token of
    # its page (set when the page is first opened); all of them for its reads, each session
    # allowing only so many a minute.
    sessions = [created(api(base, key, "POST", "/api/v1/verifications", {"workflowId": workflow}), "a verification") for _ in range(8)]
    tokens = [session["verificationUrl"].rsplit("/", 1)[1] for session in sessions]
    with urllib.request.urlopen(sessions[0]["verificationUrl"]) as page:
        csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.read().decode())
    if not csrf:
        sys.exit("error: the journey page carries no CSRF token")

    dictionaries = {
        "workflows": [workflow],
        "consultations": consultations,
        "ended_batches": [finished],
        "open_batches": [open_batch, finished],
        "verifications": [session["id"] for session in sessions],
        "tokens": tokens,
        "writable_tokens": tokens[:1],
        "authenticity_links": [link.group(1).decode()],
        "csrf": [csrf.group(1)],
        # Codes of communes: five digits of no commune are refused, as documented.
        "postal_codes": ["75001", "69003", "13001", "97400"],
    }
    bindings = {
        "createVerification": {"body.workflowId": "workflows"},
        "listConsultations": {"query.workflowId": "workflows"},
        "getConsultation": {"path.id": "consultations"},
        "getConsultationCertificate": {"path.id": "consultations"},
        "getConsultationImage": {"path.id": "consultations"},
        "getBatch": {"path.id": "open_batches"},
        "submitBatch": {"path.id": "ended_batches"},
        "cancelBatch": {"path.id": "ended_batches"},
        # Its files are made real by the hooks, which know the category they are drawn with.
        "depositDocument": {"path.id": "open_batches", "body.agencyPostalCode": "postal_codes"},
        "getVerification": {"path.id": "verifications"},
        "authenticityPage": {"path.link": "authenticity_links"},
        "journeyPage": {"path.token": "tokens"},
        "getJourneyStatus": {"path.token": "tokens"},
        "uploadJourneyFile": {"path.token": "writable_tokens", "header.X-CSRF-Token": "csrf"},
        "submitJourney": {"path.token": "writable_tokens", "header.X-CSRF-Token": "csrf"},
        "postJourneyForm": {"path.token": "writable_tokens", "body.csrf": "csrf"},
        "getJourneyLogo": {"path.token": "tokens"},
    }
    lines = ["# Written by scripts/schemathesis_seed.py for one run: real ids of the service under test.", "[dictionaries]"]
    lines += [f"{name} = {{ values = {json.dumps(values)} }}" for name, values in dictionaries.items()]
    for operation, parameters in bindings.items():
        lines += ["", "[[operations]]", f"include-operation-id = {json.dumps(operation)}"]
        bound = ", ".join(f"{json.dumps(p)} = {{ dictionary = {json.dumps(d)}, probability = {PROBABILITY} }}" for p, d in parameters.items())
        lines.append(f"parameters = {{ {bound} }}")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
