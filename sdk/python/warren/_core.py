"""The transport-free core shared by the sync and async clients.

Every HTTP call the SDK makes is named in OPERATIONS (the OpenAPI operation it
implements); the clients build requests only through ``request()``, so the
table is the truth about what the SDK covers, and a test compares it with the
server's /v1/openapi.json. ABSENT lists operations left out on purpose.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional
from urllib.parse import quote

DEFAULT_API_URL = "http://127.0.0.1:7711"

# name -> (method, path template)
OPERATIONS: Dict[str, tuple] = {
    "health": ("GET", "/healthz"),
    "create_key": ("POST", "/v1/keys"),
    "create": ("POST", "/v1/sandboxes"),
    "list": ("GET", "/v1/sandboxes"),
    "get": ("GET", "/v1/sandboxes/{id}"),
    "delete": ("DELETE", "/v1/sandboxes/{id}"),
    "exec": ("POST", "/v1/sandboxes/{id}/exec"),
    "start_process": ("POST", "/v1/sandboxes/{id}/processes"),
    "list_processes": ("GET", "/v1/sandboxes/{id}/processes"),
    "get_process": ("GET", "/v1/sandboxes/{id}/processes/{pid}"),
    "attach_process": ("GET", "/v1/sandboxes/{id}/processes/{pid}/attach"),
    "wait_process": ("GET", "/v1/sandboxes/{id}/processes/{pid}/wait"),
    "stdin_process": ("POST", "/v1/sandboxes/{id}/processes/{pid}/stdin"),
    "signal_process": ("POST", "/v1/sandboxes/{id}/processes/{pid}/signal"),
    "resize_process": ("POST", "/v1/sandboxes/{id}/processes/{pid}/resize"),
    "get_files": ("GET", "/v1/sandboxes/{id}/files"),
    "put_files": ("PUT", "/v1/sandboxes/{id}/files"),
    "delete_files": ("DELETE", "/v1/sandboxes/{id}/files"),
    "mkdir": ("POST", "/v1/sandboxes/{id}/files/mkdir"),
    "move": ("POST", "/v1/sandboxes/{id}/files/move"),
    "watch_files": ("GET", "/v1/sandboxes/{id}/files/watch"),
    "hibernate": ("POST", "/v1/sandboxes/{id}/hibernate"),
    "resume": ("POST", "/v1/sandboxes/{id}/resume"),
    "fork": ("POST", "/v1/sandboxes/{id}/fork"),
    "create_snapshot": ("POST", "/v1/sandboxes/{id}/snapshots"),
    "list_snapshots": ("GET", "/v1/snapshots"),
    "get_snapshot": ("GET", "/v1/snapshots/{name}"),
    "delete_snapshot": ("DELETE", "/v1/snapshots/{name}"),
    "list_images": ("GET", "/v1/images"),
    "build_image": ("POST", "/v1/images"),
    "delete_image": ("DELETE", "/v1/images/{name}"),
}

# Operations the SDK leaves out on purpose, with the reason.
ABSENT: Dict[str, str] = {
    "GET /metrics": "Prometheus scrapes it; not an SDK concern",
    "GET /v1/openapi.json": "the API's own description",
    "POST /v1/mcp": "MCP clients speak it, not this SDK",
    "GET /v1/sandboxes/{id}/network": "egress policy and audit: no SDK method yet (issue 18); use the HTTP API",
    "PUT /v1/sandboxes/{id}/network": "egress policy and secrets: no SDK method yet (issue 18); use the HTTP API",
    "GET /v1/sandboxes/{id}/generations": "durable generations are new (issue 13); the CLI and the Go client list them",
    "GET /v1/nodes": "fleet administration (admin key): warren node ls",
    "POST /v1/nodes/{id}/drain": "fleet administration (admin key): warren node drain",
    "GET /v1/sandboxes/{id}/processes/{pid}/pty": "the WebSocket is for browsers; sandbox.pty uses stdin, attach and resize (httpx has no WebSocket)",
}


class WarrenError(Exception):
    """An error the server reported (or a transport failure)."""

    def __init__(self, message: str, status: int = 0, code: str = ""):
        super().__init__(message)
        self.message, self.status, self.code = message, status, code


class AuthenticationError(WarrenError):
    """401/403: no key, an unknown key, or an admin-only call."""


class NotFoundError(WarrenError):
    """404: no such sandbox, file, process or snapshot (for this tenant)."""


class InvalidArgumentError(WarrenError):
    """400/422: the request itself is wrong; the message names the field."""


class ConflictError(WarrenError):
    """409: already exists, or the state does not allow the call."""


class BudgetError(WarrenError):
    """413/429/507: a size, quota or rate limit; the message names it."""


class TimeoutError(WarrenError):  # noqa: A001 - mirrors E2B's naming
    """504, or a command stopped by its time limit (see CommandResult.limit)."""


class UnavailableError(WarrenError):
    """503, or the server could not be reached; retry later."""


_BY_STATUS = {
    400: InvalidArgumentError, 401: AuthenticationError, 403: AuthenticationError,
    404: NotFoundError, 409: ConflictError, 413: BudgetError, 422: InvalidArgumentError,
    429: BudgetError, 503: UnavailableError, 504: TimeoutError, 507: BudgetError,
}


def error_for(status: int, body: bytes) -> WarrenError:
    code, message = "", ""
    try:
        detail = json.loads(body.decode("utf-8"))["error"]
        code, message = detail.get("code", ""), detail.get("message", "")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        message = body.decode("utf-8", "replace").strip()
    if not message:
        message = f"HTTP {status}"
    return _BY_STATUS.get(status, WarrenError)(message, status, code)


def resolve(api_url: Optional[str], api_key: Optional[str]) -> tuple:
    url = (api_url or os.environ.get("WARREN_SERVER") or DEFAULT_API_URL).rstrip("/")
    key = api_key or os.environ.get("WARREN_API_KEY") or ""
    return url, key


@dataclass
class Request:
    method: str
    path: str
    params: Any = field(default_factory=dict)  # a dict, or (key, value) pairs for repeated keys
    json: Any = None
    content: Optional[bytes] = None
    headers: Dict[str, str] = field(default_factory=dict)


def request(op: str, *, params=None, json_body=None, content=None, headers=None, **path_args) -> Request:
    method, template = OPERATIONS[op]
    path = template.format(**{k: quote(str(v), safe="") for k, v in path_args.items()})
    return Request(method, path, params or {}, json_body, content, dict(headers or {}))


@dataclass
class CommandResult:
    """The outcome of a command. A non-zero exit_code is a result, not an
    exception. stdout/stderr are text (bytes that are not UTF-8 appear as
    U+FFFD); stdout_bytes/stderr_bytes are exact."""

    exit_code: int
    stdout_bytes: bytes = b""
    stderr_bytes: bytes = b""
    duration_ms: float = 0.0
    limit: str = ""
    truncated: bool = False

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")


@dataclass
class EntryInfo:
    path: str
    name: str
    type: str
    size: int
    mode: str
    mod_time: str
    target: str = ""

    @staticmethod
    def of(d: dict) -> "EntryInfo":
        return EntryInfo(d["path"], d["name"], d["type"], d.get("size", 0), d.get("mode", ""), d.get("mod_time", ""), d.get("target", ""))


def exec_body(cmd: str, cwd, envs, timeout, stdin, session) -> dict:
    body: Dict[str, Any] = {"script": cmd}
    if cwd:
        body["cwd"] = cwd
    if envs:
        body["env"] = dict(envs)
    if timeout is not None:
        body["timeout"] = f"{int(timeout * 1000)}ms"
    if stdin is not None:
        body["stdin"] = stdin if isinstance(stdin, str) else stdin.decode("utf-8")
    if session:
        body["session"] = session
    return body


class EventReader:
    """Turns NDJSON exec events into callbacks and a CommandResult."""

    def __init__(self, on_stdout: Optional[Callable[[str], Any]], on_stderr: Optional[Callable[[str], Any]],
                 on_bytes: Optional[Callable[[bytes], Any]] = None):
        self.on_stdout, self.on_stderr, self.on_bytes = on_stdout, on_stderr, on_bytes
        self.out, self.err = bytearray(), bytearray()
        self.result: Optional[CommandResult] = None

    def line(self, line: str) -> None:
        if not line.strip():
            return
        ev = json.loads(line)
        if "error" in ev:
            d = ev["error"]
            raise WarrenError(d.get("message", "exec failed"), 0, d.get("code", ""))
        for key, buf, cb in (("stdout", self.out, self.on_stdout), ("stderr", self.err, self.on_stderr)):
            data = None
            if key in ev:
                data = ev[key].encode("utf-8")
            elif key + "_b64" in ev:
                data = base64.b64decode(ev[key + "_b64"])
            if data is not None:
                buf.extend(data)
                if key == "stdout" and self.on_bytes is not None:
                    self.on_bytes(data)
                if cb is not None:
                    cb(data.decode("utf-8", "replace"))
        if "exit" in ev:
            self.result = self.finish(ev)

    def finish(self, ev: dict) -> CommandResult:
        return CommandResult(ev["exit"], bytes(self.out), bytes(self.err), ev.get("duration_ms", 0.0), ev.get("limit", ""), ev.get("truncated", False))

    def done(self) -> CommandResult:
        if self.result is None:
            raise UnavailableError("the exec stream ended without an exit status (connection lost)")
        return self.result


def result_of(d: dict) -> CommandResult:
    return CommandResult(d.get("exit", 0), d.get("stdout", "").encode("utf-8"), d.get("stderr", "").encode("utf-8"),
                         d.get("duration_ms", 0.0), d.get("limit", ""), d.get("truncated", False))


def label_params(labels) -> list:
    return [("label", f"{k}={v}") for k, v in (labels or {}).items()]


def create_body(image, snapshot, envs, cwd, labels, limits, ttl) -> dict:
    body: Dict[str, Any] = {}
    for k, v in (("image", image), ("snapshot", snapshot), ("env", envs), ("cwd", cwd), ("labels", labels), ("limits", limits)):
        if v:
            body[k] = v
    if ttl:
        body["ttl"] = f"{int(ttl * 1000)}ms"
    return body


def read_params(path, offset, length) -> dict:
    params = {"path": path}
    if offset:
        params["offset"] = str(offset)
    if length:
        params["length"] = str(length)
    return params


def write_params(path, append, mode) -> dict:
    params = {"path": path, "mode": "append" if append else "truncate"}
    if mode is not None:
        params["perm"] = format(mode, "o")
    return params


def list_params(path, depth, recursive) -> dict:
    params = {"path": path, "list": "true"}
    if depth:
        params["depth"] = str(depth)
    if recursive:
        params["recursive"] = "true"
    return params


def check_format(fmt: str) -> None:
    if fmt not in ("text", "bytes"):
        raise InvalidArgumentError(f"format {fmt!r}: want 'text' or 'bytes'")


def encode(data) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    return bytes(data)


def pty_body(cols: int, rows: int, cmd, cwd, envs, session, timeout=None) -> dict:
    """The body of a start_process on a terminal: an interactive shell
    without cmd; timeout (seconds) bounds each command line."""
    body = exec_body(cmd, cwd, envs, timeout, None, session) if cmd else {}
    if not cmd and timeout is not None:
        body["timeout"] = f"{int(timeout * 1000)}ms"
    if not cmd:
        if cwd:
            body["cwd"] = cwd
        if envs:
            body["env"] = dict(envs)
        if session:
            body["session"] = session
    body["pty"] = {"cols": cols, "rows": rows}
    return body


@dataclass
class WatchEvent:
    """A file event. name is relative to the watched directory; type is
    create, write, remove, rename (old_name is the old name), chmod,
    overflow (dropped events were lost) or closed (the last: reason is
    hibernated, deleted, removed or shutdown)."""

    type: str
    name: str = ""
    old_name: str = ""
    file_type: str = ""
    dropped: int = 0
    reason: str = ""

    @staticmethod
    def of(d: dict) -> "WatchEvent":
        return WatchEvent(d.get("type", ""), d.get("name", ""), d.get("old_name", ""), d.get("file_type", ""),
                          d.get("dropped", 0), d.get("reason", ""))


def watch_params(path, recursive) -> dict:
    params = {"path": path}
    if recursive:
        params["recursive"] = "true"
    return params


def watch_event(line: str) -> Optional[WatchEvent]:
    if not line.strip():
        return None
    return WatchEvent.of(json.loads(line))
