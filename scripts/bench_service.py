"""The service as the benches drive it: a release `sceau` in a temporary data dir, embedded or
distributed (gateway, N worker processes, notifier, on the local RabbitMQ and Redis, own vhost),
with a company, an API key and an identity workflow; journeys and batches through the real API.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid

from sceau_client import api, b64

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "samples")
BATCH_DOCUMENTS = 200


def sample(category, name):
    """The bytes of one of the shared sample documents."""
    with open(os.path.join(SAMPLES, category, name), "rb") as f:
        return f.read()


class Service:
    """A release `sceau` in a temporary data dir: embedded, or distributed on its own vhost."""

    def __init__(self, binary, worker_processes, extra):
        self.binary, self.children, self.vhost, self.journeys = binary, [], None, 0
        self.data = tempfile.mkdtemp(prefix="sceau-bench-rt-")
        self.env = dict(
            os.environ,
            SCEAU_DATA_DIR=self.data,
            SCEAU_LISTEN="127.0.0.1:0",
            SCEAU_METRICS_LISTEN="127.0.0.1:0",
            SCEAU_WORKERS=str(os.cpu_count()),
            SCEAU_REALTIME_RATE_PER_MINUTE="100000",
            SCEAU_TRUSTED_PROXIES="127.0.0.0/8",
            RUST_LOG="warn",
            **extra,
        )
        if worker_processes:
            self.vhost = f"sceau-bench-{uuid.uuid4().hex[:8]}"
            subprocess.run(["rabbitmqctl", "add_vhost", self.vhost], check=True, capture_output=True)
            subprocess.run(["rabbitmqctl", "set_permissions", "-p", self.vhost, "guest", ".*", ".*", ".*"], check=True, capture_output=True)
            self.env.update(
                SCEAU_AMQP_URL=f"amqp://guest:guest@127.0.0.1:5672/{self.vhost}",
                SCEAU_REDIS_URL="redis://127.0.0.1:6379/0",
                SCEAU_REDIS_PREFIX=f"{self.vhost}:",
            )
            self.base = self.spawn("gateway", announces=True)
            for _ in range(worker_processes):
                self.spawn("worker", "--concurrency", self.env["SCEAU_WORKERS"])
            self.spawn("notifier")
        else:
            self.base = self.spawn("serve", announces=True)
        self.env["SCEAU_BIN"] = binary
        company = self.admin("company", "create", "--name", "Bench", "--licence", "group")
        self.company = company["id"]
        self.key = self.admin("key", "create", "--company", company["id"])["key"]
        self.workflow = self.admin("workflow", "create", "--company", company["id"], "--name", "Parcours", "--category", "identite")["id"]

    def spawn(self, *args, announces=False):
        child = subprocess.Popen([self.binary, *args], env=self.env, stdout=subprocess.PIPE if announces else subprocess.DEVNULL, text=True)
        self.children.append(child)
        if announces:
            for line in child.stdout:
                if line.startswith("sceau listening on "):
                    return line.strip().removeprefix("sceau listening on ")
            raise RuntimeError(f"sceau {args[0]} did not start")
        return None

    def admin(self, *args):
        out = subprocess.run([self.binary, "admin", *args, "--json"], env=self.env, check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    def pids(self, role):
        """The process ids of `role` (`serve`, `gateway`, `worker`, `notifier`)."""
        return [c.pid for c in self.children if c.args[1] == role]

    def stop(self):
        for child in self.children:
            child.terminate()
        for child in self.children:
            child.wait()
        shutil.rmtree(self.data, ignore_errors=True)
        if self.vhost:
            subprocess.run(["rabbitmqctl", "delete_vhost", self.vhost], capture_output=True)

    def journey(self, photo, selfie=None, consent=False):
        """One journey (`photo` as the document's front, `selfie` or `photo` again as the selfie,
        the consent to the face comparison given or not), from a customer address of its own
        behind the trusted proxy that the bench is (journey requests are limited per address);
        seconds from submit to the result recorded, polled through the API every 10 ms (the page's
        own polling is limited to one a second)."""
        self.journeys += 1
        status, session = api(self.base, self.key, "POST", "/api/v1/verifications", {"workflowId": self.workflow})
        assert status == 201, session
        url = session["verificationUrl"]
        customer = {"X-Forwarded-For": f"10.{self.journeys // 65536 % 256}.{self.journeys // 256 % 256}.{self.journeys % 256}"}
        with urllib.request.urlopen(urllib.request.Request(url, headers=customer)) as r:
            csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', r.read().decode()).group(1)
        same_origin = {**customer, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "same-origin"}
        for side, file in (("front", photo), ("selfie", selfie or photo)):
            post(f"{url}/files/{side}", file, {**same_origin, "Content-Type": "image/jpeg"})
        began = time.monotonic()
        post(f"{url}/submit" + ("?biometricConsent=true" if consent else ""), b"", same_origin)
        while True:
            _, read = api(self.base, self.key, "GET", f"/api/v1/verifications/{session['id']}")
            if read["status"] == "completed":
                return time.monotonic() - began
            time.sleep(0.01)

    def batch(self, file, submit=True, category="identite", documents=BATCH_DOCUMENTS):
        """Opens and fills a batch with `documents` copies of `file`; returns its id (submitted if
        asked)."""
        _, batch = api(self.base, self.key, "POST", "/api/v1/batches", {"externalRef": "bench"})
        document = b64(file)
        for _ in range(documents):
            status, body = api(self.base, self.key, "POST", f"/api/v1/batches/{batch['id']}/documents", {"documentCategory": category, "document": document})
            assert status == 201, body
        if submit:
            self.submit(batch["id"])
        return batch["id"]

    def submit(self, batch):
        status, body = api(self.base, self.key, "POST", f"/api/v1/batches/{batch}/submit")
        assert status == 200, body

    def ended(self, batch):
        _, detail = api(self.base, self.key, "GET", f"/api/v1/batches/{batch}")
        return detail["status"] == "ended"

    def wait_ended(self, batch):
        while not self.ended(batch):
            time.sleep(0.05)


def post(url, body, headers):
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"POST {url}: {e.code} {e.read()[:200]!r}") from e
