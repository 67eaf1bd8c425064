"""Schemathesis hooks of scripts/schemathesis.

`filter_failure`: the refusals that the API documents but that no JSON Schema can express, so that
schemathesis' positive_data_acceptance check (ST202, "a schema-valid request was refused") does not
report them. Each is dropped only when the request really is of that kind; the same refusal of a
request that should have passed stays a failure. Schemathesis counts what it drops and prints it at
the end of the run.

`map_case`: real files in deposits, an address of its own for each journey request, and an
Idempotency-Key of its own for most writes."""
import ast
import base64
import binascii
import ipaddress
import itertools
import json
import os
import re
import sys
import threading
import urllib.parse

import schemathesis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sceau_client import b64, png  # noqa: E402

# CPython 3.11, the machine's, keeps one AST recursion counter per interpreter: two threads in
# ast.parse at once can corrupt it, and one fails with "SystemError: AST constructor recursion
# depth mismatch" (CPython issue 106905). Hypothesis parses the source of the lambdas in a
# strategy's repr, and with --workers 2 the coverage phase does that from two threads: about one
# run in three ended with a schemathesis "Runtime Error" (a KeyError in Hypothesis' lambda cache,
# then that SystemError). One parse at a time costs nothing measurable.
_parse, _parsing = ast.parse, threading.Lock()


def _one_parse_at_a_time(*args, **kwargs):
    with _parsing:
        return _parse(*args, **kwargs)


ast.parse = _one_parse_at_a_time

# First bytes of the file types a deposit accepts (API.md): identity documents are images,
# administrative ones images, TIFF or a PDF.
IMAGES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n")
ADMINISTRATIVE_ONLY = (b"%PDF-", b"II*\x00", b"MM\x00*")


def _json(data):
    try:
        return json.loads(data)
    except (TypeError, ValueError):
        return None


def _accepted_file(data, administrative):
    """Whether bytes begin as a file of a type a deposit or journey upload accepts."""
    if not isinstance(data, (bytes, bytearray)):
        return False
    webp = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return webp or data.startswith(IMAGES) or (administrative and data.startswith(ADMINISTRATIVE_ONLY))


def _decoded(encoded):
    """A deposit's base64 text as bytes, None if it is not base64 (the server tolerates a data
    URL prefix and line breaks, so this does too)."""
    if not isinstance(encoded, str):
        return None
    text = re.sub(r"\s", "", encoded.split(",", 1)[1] if encoded.startswith("data:") else encoded)
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _cursor_well_formed(cursor):
    """Whether a consultation cursor is one the server could have issued: `c1:<sequence>` in
    unpadded base64url, the sequence a positive 64-bit integer. Any other text is not a
    `nextCursor` and is refused, as documented."""
    if not re.fullmatch(r"[A-Za-z0-9_-]*", cursor):
        return False
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    canonical = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=") == cursor
    sequence = re.fullmatch(r"c1:([0-9]+)", text)
    return canonical and sequence is not None and 0 < int(sequence.group(1)) < 2**63


# notifier/src/destination.rs, SERVICE_PORTS.
_SERVICE_PORTS = {1433, 1521, 1883, 2049, 2181, 2375, 2376, 2379, 2380, 3306, 3389, 4222, 4369, 5432,
                  5672, 5984, 6379, 6443, 8200, 8300, 8500, 8883, 9042, 9092, 9200, 9300, 10250,
                  11211, 15672, 25672, 27017}


def _public_https_url(url):
    """Whether a webhook URL is one the API takes (API.md, Destinations): https, a host, no
    credentials, a web port (443, 80, or 1024 and above but a well-known service's: the
    notifier's SERVICE_PORTS, docs/hardening.md), and not a loopback, private, link-local or
    reserved address nor `localhost`."""
    if not isinstance(url, str):
        return False
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
        credentials = parts.username is not None or parts.password is not None
        port = parts.port  # a port that is not a number raises
    except ValueError:
        return False
    if parts.scheme.lower() != "https" or not host or credentials:
        return False
    if port is not None and port not in (80, 443) and (port < 1024 or port in _SERVICE_PORTS):
        return False
    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        pass
    name = host.rstrip(".").lower()
    labels = name.split(".")
    plain = all(re.fullmatch(r"[a-z0-9-]{1,63}", label) for label in labels)
    return plain and name != "localhost" and not name.endswith(".localhost") and not name.replace(".", "").isdigit()


def _plain_https_url(url):
    """Whether a `returnUrl` is surely one the API takes (docs/journey.md, The way back): https, a
    plain host name (no port, no credentials, no punycode to decode), visible ASCII only and at
    most 2,048 characters. Other URLs may be taken too; their refusal is not a failure."""
    if not isinstance(url, str) or len(url) > 2048:
        return False
    match = re.fullmatch(r"https://([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)(/[\x21-\x7e]*)?", url)
    return match is not None and not any(label.lower().startswith("xn--") for label in match.group(1).split("."))


def _idempotency_key(case):
    keys = [v for k, v in (case.headers or {}).items() if k.lower() == "idempotency-key"]
    return str(keys[0]) if keys else None


def _request_of(case):
    """What the server fingerprints for an Idempotency-Key: method, path with its ids, body."""
    path = case.operation.path
    for name, value in (case.path_parameters or {}).items():
        path = path.replace("{%s}" % name, str(value))
    return (case.method.upper(), path, repr(case.body), repr(sorted((case.query or {}).items())))


# Every request of the run sent with each Idempotency-Key (recorded by `map_case`), so that a 422
# `idempotency_key_reused` is recognised as what API.md says it is: the key of an earlier,
# different request. The generator draws keys from a small space and reuses them across operations.
_requests_by_key = {}
_requests_lock = threading.Lock()


def _key_used_by_another_request(case):
    key = _idempotency_key(case)
    with _requests_lock:
        seen = _requests_by_key.get(key, set())
        return key is not None and bool(seen - {_request_of(case)})


def documented_refusal(case, response):
    """Why this 400 (or 422) is a documented refusal of a schema-valid request, or None."""
    error = _json(response.content) or {}
    if response.status_code == 422 and error.get("error") == "idempotency_key_reused":
        # Depends on the requests made before with the same key, which no schema can state.
        if _key_used_by_another_request(case):
            return "an Idempotency-Key an earlier request of the run used"
    if response.status_code != 400:
        return None
    if case.operation.label == "POST /v/{token}":
        # The plain form post answers its form again, in HTML, when a file is not one the journey
        # takes (made-up bytes never are) or a required one is missing, which depends on the
        # requests made before: no schema of this one can state either.
        return "a journey form whose files are made up or incomplete"
    field, code = error.get("field"), error.get("error")
    operation = case.operation.label
    body = case.body if isinstance(case.body, dict) else {}
    if operation == "GET /api/v1/consultations" and field == "cursor":
        # API.md: `cursor` is the previous page's opaque `nextCursor`; another value is refused.
        if not _cursor_well_formed(str((case.query or {}).get("cursor", ""))):
            return "a cursor the server never issued"
    if operation == "POST /api/v1/batches" and field == "webhookUrl" and code == "invalid_request":
        # A host that is not public, or not a host at all: the guard against server-side request
        # forgery that the field's description states, which no pattern can.
        if not _public_https_url(body.get("webhookUrl")):
            return "a webhook URL that is not of a public https host"
    if operation == "POST /api/v1/verifications" and field == "returnUrl" and code == "invalid_request":
        # https (or http to a host the operator allows) without credentials: a rule on the URL's
        # parts that the field's description states and `format: uri` cannot.
        if not _plain_https_url(body.get("returnUrl")):
            return "a return URL that is not a plain https URL"
    if operation == "POST /api/v1/batches/{id}/documents":
        category = body.get("documentCategory")
        if field == "agencyPostalCode" and code == "invalid_request":
            # Five digits matching no commune of the postal code register (API.md: "unknown
            # postal code"): the register is data, not a pattern.
            if re.fullmatch(r"[0-9]{5}", str(body.get("agencyPostalCode"))):
                return "a postal code of no commune"
        if field in ("document", "documentVerso") and code == "invalid_document":
            # The bytes must be a file of a type the category accepts: a property of the decoded
            # content that a string schema cannot state. (A back on an administrative document
            # is a rule of the request's shape and stays a failure.)
            if not (field == "documentVerso" and category == "administratif"):
                if not _accepted_file(_decoded(body.get(field)), category == "administratif"):
                    return "bytes that are not a file of an accepted type"
    if operation == "POST /v/{token}/files/{side}" and field == (case.path_parameters or {}).get("side"):
        # The raw body must be a file of a type the side accepts, as for a deposit.
        if code == "invalid_document" and not _accepted_file(case.body, field == "document"):
            return "bytes that are not a file of an accepted type"
    if operation == "POST /v/{token}/files/{side}" and field == "side" and code == "invalid_request":
        # The sides a journey takes depend on its workflow's category, a property of the session
        # and not of the request (the parameter's description lists them per category).
        return "a side this journey does not take"
    if operation == "POST /v/{token}/submit" and field in ("front", "selfie", "document") and code == "invalid_request":
        # A journey is submitted once its required files are uploaded: a matter of the requests
        # made before, which no schema of this one can state.
        return "a journey submitted before its required files"
    return None


def binary_part_taken(case, response, failure):
    """Whether schemathesis reports a journey form as "schema-violating but accepted" for its file
    parts alone: on the wire a multipart part is bytes whatever `format: binary` the schema gives
    it, so a "violation" of that format is a file like any other; the form then submits (303)."""
    checks = getattr(failure, "checks", ())
    return (
        case.operation.label == "POST /v/{token}"
        and response.status_code == 303
        and "negative_data_rejection" in checks
    )


def unframed(case, response):
    """Whether schemathesis sent a Content-Length that is not a number (a header it made up): such
    a message is not HTTP (RFC 9112, 6.3), and the HTTP server answers it with a bare 400 and
    closes before any route, or the document, has a say."""
    lengths = [v for k, v in (case.headers or {}).items() if k.lower() == "content-length"]
    return response.status_code == 400 and any(not str(v).strip().isdigit() for v in lengths)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but a positive_data_acceptance one on a documented refusal, and those
    on the answer to a message that is not HTTP."""
    if unframed(case, response):
        return False
    if binary_part_taken(case, response, failure):
        return False
    if "positive_data_acceptance" not in getattr(failure, "checks", ()):
        return True
    return documented_refusal(case, response) is None


# Addresses of the benchmarking range 198.18.0.0/15, one after the other (not `random`, which
# Hypothesis forbids inside the strategies this hook runs in), and the same for the deposits that
# get real files.
_addresses = itertools.count(1)
_fresh_keys = itertools.count()
_deposits = itertools.count()
# Real PNG files, small enough to keep the run fast: accepted for either category.
_FRONT, _BACK = b64(png(24, seed=1)), b64(png(24, seed=2))


@schemathesis.hook
def map_case(context, case):
    """Makes two kinds of request reach the logic behind their first refusal.

    Every other valid deposit carries real PNG files, the back only on an identity document (where
    the category allows one): bytes schemathesis makes up are never a file of an accepted type, so
    no deposit would ever be accepted. Invalid deposits are left alone, to stay invalid.

    Journey requests come from an address of their own each (through the trusted proxy the script
    configures): the journey's limit per address, a throttle tested by tests/it/abuse.rs, would
    otherwise answer 429 to nearly all of them. Its limits per session still apply."""
    if case.operation.label == "POST /api/v1/batches/{id}/documents" and isinstance(case.body, dict):
        meta = case.meta
        if meta is not None and meta.generation.mode == "positive" and next(_deposits) % 2 == 0:
            body = dict(case.body)
            if isinstance(body.get("document"), str):
                body["document"] = _FRONT
            if isinstance(body.get("documentVerso"), str) and body.get("documentCategory") == "identite":
                body["documentVerso"] = _BACK
            case.body = body
    key = _idempotency_key(case)
    positive = case.meta is not None and case.meta.generation.mode == "positive"
    if key is not None and positive and next(_fresh_keys) % 4:
        # The generator draws keys from a small space: left alone, most writes would meet a key
        # of an earlier request and stop at 422 before their handler. Three in four get a key of
        # their own; the fourth keeps the drawn one, so replays and reuses are still exercised.
        key = "%s-%d" % (key[:200], next(_fresh_keys))
        for name in [k for k in case.headers if k.lower() == "idempotency-key"]:
            case.headers[name] = key
    if key is not None:
        with _requests_lock:
            _requests_by_key.setdefault(key, set()).add(_request_of(case))
    if case.operation.path.startswith("/v/"):
        n = next(_addresses) % (1 << 17)
        headers = dict(case.headers or {})
        headers["X-Forwarded-For"] = "198.%d.%d.%d" % (18 + (n >> 16), (n >> 8) & 255, n & 255)
        case.headers = headers
    return case
