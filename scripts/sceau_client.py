"""Tiny client helpers shared by scripts/quickstart and scripts/bench (Python standard library only)."""
import base64
import hashlib
import hmac
import json
import os
import struct
import subprocess
import threading
import urllib.error
import urllib.request
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def sceau(*args):
    """Runs `sceau admin ... --json` (SCEAU_BIN, default: the release build through cargo)."""
    binary = os.environ.get("SCEAU_BIN", "cargo run -q --release --").split()
    out = subprocess.run(binary + ["admin", *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def api(base, key, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def png(side, seed=1):
    """A real PNG of side x side noise pixels (about 3 * side^2 bytes)."""
    rows = bytearray()
    state = (seed * 2654435761 + 1) & 0xFFFFFFFF
    for _ in range(side):
        rows.append(0)
        for _ in range(side * 3):
            state ^= (state << 13) & 0xFFFFFFFF
            state ^= state >> 17
            state ^= (state << 5) & 0xFFFFFFFF
            rows.append(state & 0xFF)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(rows), 1)) + chunk(b"IEND", b"")


def pdf_one_page(text):
    content = f"BT /F1 14 Tf 56 780 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, o in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def b64(data):
    return base64.b64encode(data).decode()


class Receiver:
    """A local webhook receiver that verifies Standard Webhooks signatures."""

    def __init__(self, secret):
        key = base64.b64decode(secret.removeprefix("whsec_"))
        self.events, self.cond = [], threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                msg = f"{self.headers['webhook-id']}.{self.headers['webhook-timestamp']}.".encode() + body
                expected = "v1," + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()
                valid = expected in self.headers.get("webhook-signature", "").split(" ")
                self.send_response(200 if valid else 400)
                self.end_headers()
                with outer.cond:
                    outer.events.append({"signatureValid": valid, "event": json.loads(body)})
                    outer.cond.notify_all()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, timeout=60):
        with self.cond:
            self.cond.wait_for(lambda: self.events, timeout)
            return list(self.events)
