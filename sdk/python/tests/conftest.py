"""Starts a real `warren serve` (built from this checkout, or $WARREN_BIN) on
a loopback port with a temporary data directory, once per test session.

Its egress resolves the test names below to 127.0.0.1 (--egress-hosts),
where the session's own HTTP and HTTPS servers listen; loopback is opened
to sandboxes whose policy allows it (--egress-allow-cidr 127.0.0.1/32), and
the HTTPS server's certificate is trusted (--egress-ca). Nothing leaves the
machine."""

import http.server
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from warren import Client  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# Names the server's --egress-hosts maps to 127.0.0.1.
ALLOWED, DENIED, SECRET_HOST = "allowed.warren.test", "denied.warren.test", "secret.warren.test"


def _binary(tmp: str) -> str:
    if os.environ.get("WARREN_BIN"):
        return os.environ["WARREN_BIN"]
    out = os.path.join(tmp, "warren")
    subprocess.run(["go", "build", "-o", out, "./cmd/warren"], cwd=REPO, check=True)
    return out


def need(what: str, why: str):
    """A part the tests need is missing: fail in CI, skip elsewhere."""
    msg = f"{what} is missing: {why}"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


class Serve:
    """One `warren serve` process: url, admin key, stop()."""

    def __init__(self, binary: str, data: str, *flags: str, env=None):
        self.proc = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0", "--data", data, "--no-native", *flags],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        url, lines = None, []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"warren listening on (http://\S+)", line)
            if m:
                url = m.group(1)
            if line.startswith("admin key file:"):
                break
        if url is None:
            self.proc.kill()
            raise RuntimeError("warren serve did not start:\n" + "".join(lines))
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drain
        self.url = url
        with open(os.path.join(data, "admin.key")) as f:
            self.admin = f.read().strip()

    def tenant_key(self, name: str) -> str:
        c = Client(api_url=self.url, api_key=self.admin)
        try:
            return c.create_key(name)
        finally:
            c.close()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Upstream:
    """A loopback HTTP (or HTTPS) server answering every GET with what it
    received as JSON: the Host header, the path and the Authorization
    header; hits counts requests by Host name."""

    def __init__(self, cert=None):
        self.hits = {}
        up = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                host = (self.headers.get("Host") or "").split(":")[0]
                up.hits[host] = up.hits.get(host, 0) + 1
                body = json.dumps({"host": host, "path": self.path, "authorization": self.headers.get("Authorization", "")}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*cert)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _cert(tmp: str):
    """A self-signed certificate for SECRET_HOST, or None without openssl."""
    if not shutil.which("openssl"):
        return None
    key, crt = os.path.join(tmp, "upstream.key"), os.path.join(tmp, "upstream.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                    "-out", crt, "-subj", "/CN=" + SECRET_HOST, "-addext", "subjectAltName=DNS:" + SECRET_HOST, "-days", "2"],
                   check=True, capture_output=True)
    return crt, key


@pytest.fixture(scope="session")
def binary():
    tmp = tempfile.mkdtemp(prefix="warren-pysdk-bin-")
    return _binary(tmp)


@pytest.fixture(scope="session")
def upstream():
    """The plain HTTP upstream and, when openssl made a certificate, the
    HTTPS one (None otherwise), with the certificate file."""
    tmp = tempfile.mkdtemp(prefix="warren-pysdk-up-")
    cert = _cert(tmp)
    plain = Upstream()
    tls = Upstream(cert) if cert else None
    yield {"http": plain, "https": tls, "ca": cert[0] if cert else None}
    plain.close()
    if tls:
        tls.close()


@pytest.fixture(scope="session")
def server(binary, upstream):
    tmp = tempfile.mkdtemp(prefix="warren-pysdk-")
    hosts = os.path.join(tmp, "hosts")
    with open(hosts, "w") as f:
        f.write(f"127.0.0.1 {ALLOWED} {DENIED} {SECRET_HOST}\n")
    flags = ["--egress-hosts", hosts, "--egress-allow-cidr", "127.0.0.1/32"]
    if upstream["ca"]:
        flags += ["--egress-ca", upstream["ca"]]
    srv = Serve(binary, os.path.join(tmp, "data"), *flags)
    yield {"url": srv.url, "admin": srv.admin}
    srv.stop()


_seq = [0]


@pytest.fixture()
def tenant(server, monkeypatch):
    """A fresh tenant's key, also exported as $WARREN_SERVER/$WARREN_API_KEY."""
    _seq[0] += 1
    c = Client(api_url=server["url"], api_key=server["admin"])
    key = c.create_key(f"py{_seq[0]}")
    c.close()
    monkeypatch.setenv("WARREN_SERVER", server["url"])
    monkeypatch.setenv("WARREN_API_KEY", key)
    return {"url": server["url"], "key": key}


def _versitygw():
    found = shutil.which("versitygw")
    if found:
        return found
    gobin = os.path.join(os.environ.get("GOPATH") or os.path.expanduser("~/go"), "bin", "versitygw")
    return gobin if os.access(gobin, os.X_OK) else None


@pytest.fixture()
def stallable(binary):
    """A `warren serve` whose blobs are in a real versitygw (S3) the test
    can stall with SIGSTOP (pause()) and resume (resume()); a 1 MiB
    per-sandbox uncommitted budget and a 300 ms budget wait."""
    gw = _versitygw()
    if gw is None:
        need("versitygw", "the write-budget test stalls a real S3 server (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
    tmp = tempfile.mkdtemp(prefix="warren-pysdk-s3-")
    os.makedirs(os.path.join(tmp, "s3", "bucket"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    access, secret = "sdktestaccess", "sdktestsecretkey"
    gwp = subprocess.Popen([gw, "--access", access, "--secret", secret, "--port", f"127.0.0.1:{port}", "posix", os.path.join(tmp, "s3")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline or gwp.poll() is not None:
                gwp.kill()
                raise RuntimeError("versitygw did not start")
            time.sleep(0.05)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=access, AWS_SECRET_ACCESS_KEY=secret)
    srv = Serve(binary, os.path.join(tmp, "data"), "--workers", "0", "--blobs", "s3://bucket/warren",
                "--s3-endpoint", f"http://127.0.0.1:{port}", "--s3-path-style", "--uncommitted-budget", "1MiB",
                "--budget-wait", "300ms", "--gc-interval", "0", env=env)
    stopped = [False]

    def pause():
        gwp.send_signal(signal.SIGSTOP)
        stopped[0] = True

    def resume():
        gwp.send_signal(signal.SIGCONT)
        stopped[0] = False

    yield {"url": srv.url, "key": srv.tenant_key("budget"), "pause": pause, "resume": resume}
    if stopped[0]:
        resume()
    srv.stop()
    gwp.terminate()
    gwp.wait(timeout=10)


@pytest.fixture()
def shedding(binary):
    """A `warren serve` that sheds every create and exec (--shed-above 1B:
    its heap is always over that high-water mark)."""
    tmp = tempfile.mkdtemp(prefix="warren-pysdk-shed-")
    srv = Serve(binary, os.path.join(tmp, "data"), "--workers", "0", "--shed-above", "1B")
    yield {"url": srv.url, "key": srv.tenant_key("shed")}
    srv.stop()
