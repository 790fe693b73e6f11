"""Starts a real `warren serve` (built from this checkout, or $WARREN_BIN) on
a loopback port with a temporary data directory, once per test session."""

import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from warren import Client  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _binary(tmp: str) -> str:
    if os.environ.get("WARREN_BIN"):
        return os.environ["WARREN_BIN"]
    out = os.path.join(tmp, "warren")
    subprocess.run(["go", "build", "-o", out, "./cmd/warren"], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="session")
def server():
    tmp = tempfile.mkdtemp(prefix="warren-pysdk-")
    data = os.path.join(tmp, "data")
    proc = subprocess.Popen([_binary(tmp), "serve", "--addr", "127.0.0.1:0", "--data", data, "--no-native"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = None
    deadline = time.time() + 60
    lines = []
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"warren listening on (http://\S+)", line)
        if m:
            url = m.group(1)
        if line.startswith("admin key file:"):
            break
    if url is None:
        proc.kill()
        raise RuntimeError("warren serve did not start:\n" + "".join(lines))
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # drain
    with open(os.path.join(data, "admin.key")) as f:
        admin = f.read().strip()
    yield {"url": url, "admin": admin}
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


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
