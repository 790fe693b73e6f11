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
import re
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
    "get_network": ("GET", "/v1/sandboxes/{id}/network"),
    "set_network": ("PUT", "/v1/sandboxes/{id}/network"),
    "list_generations": ("GET", "/v1/sandboxes/{id}/generations"),
    "create_volume": ("POST", "/v1/volumes"),
    "list_volumes": ("GET", "/v1/volumes"),
    "get_volume": ("GET", "/v1/volumes/{name}"),
    "resize_volume": ("PATCH", "/v1/volumes/{name}"),
    "delete_volume": ("DELETE", "/v1/volumes/{name}"),
    "create_drive": ("POST", "/v1/drives"),
    "list_drives": ("GET", "/v1/drives"),
    "get_drive": ("GET", "/v1/drives/{name}"),
    "delete_drive": ("DELETE", "/v1/drives/{name}"),
    "mount_drive": ("POST", "/v1/sandboxes/{id}/mounts"),
    "list_mounts": ("GET", "/v1/sandboxes/{id}/mounts"),
    "unmount_drive": ("DELETE", "/v1/sandboxes/{id}/mounts"),
}

# Operations the SDK leaves out on purpose, with the reason.
ABSENT: Dict[str, str] = {
    "GET /metrics": "Prometheus scrapes it; not an SDK concern",
    "GET /v1/openapi.json": "the API's own description",
    "POST /v1/mcp": "MCP clients speak it, not this SDK",
    "GET /v1/nodes": "fleet operators' call (admin key, a fleet node only): warren node ls; not what a sandbox user does",
    "POST /v1/nodes/{id}/drain": "fleet operators' call (admin key, a fleet node only): warren node drain",
    "GET /v1/sandboxes/{id}/processes/{pid}/pty": "the WebSocket is for browsers; sandbox.pty uses stdin, attach and resize (httpx has no WebSocket)",
}


class WarrenError(Exception):
    """An error the server reported (or a transport failure). code is the
    server's error code (e.g. "not_found"); retry_after is the seconds the
    server asked to wait before retrying (Retry-After), else None."""

    def __init__(self, message: str, status: int = 0, code: str = "", retry_after: Optional[float] = None):
        super().__init__(message)
        self.message, self.status, self.code, self.retry_after = message, status, code, retry_after


class AuthenticationError(WarrenError):
    """401/403: no key, an unknown key, or an admin-only call."""


class NotFoundError(WarrenError):
    """404: no such sandbox, file, process, snapshot or generation (for this tenant)."""


class InvalidArgumentError(WarrenError):
    """400/422: the request itself is wrong; the message names the field."""


class ConflictError(WarrenError):
    """409: already exists, or the state does not allow the call."""


class AlreadyExistsError(ConflictError):
    """409 already_exists: e.g. a snapshot name that is taken."""


class FencedError(ConflictError):
    """409: another node took the sandbox over; this node refuses its
    writes. Reconnect (any node of the fleet forwards to the owner)."""


class BudgetError(WarrenError):
    """413/429/507: a size, quota or rate limit; the message names it."""


class WriteBudgetError(BudgetError):
    """507 write_budget_exhausted: the sandbox (or node) holds as much
    data not yet committed to object storage as its budget allows. The
    write changed nothing; retry after retry_after seconds."""


class TimeoutError(WarrenError):  # noqa: A001 - mirrors E2B's naming
    """504, or a command stopped by its time limit (see CommandResult.limit)."""


class UnavailableError(WarrenError):
    """503, or the server could not be reached; retry later."""


class OverloadedError(UnavailableError):
    """503 overloaded: the node sheds new work under memory pressure; the
    same call succeeds later (after retry_after seconds) or on another node."""


class UnsupportedError(WarrenError):
    """501: this server does not offer the call (e.g. generations without
    a write log, node administration outside a fleet)."""


_BY_STATUS = {
    400: InvalidArgumentError, 401: AuthenticationError, 403: AuthenticationError,
    404: NotFoundError, 409: ConflictError, 413: BudgetError, 422: InvalidArgumentError,
    429: BudgetError, 501: UnsupportedError, 503: UnavailableError, 504: TimeoutError, 507: BudgetError,
}

# Codes more precise than their status (api/errors.go has the table).
_BY_CODE = {
    "already_exists": AlreadyExistsError,
    "write_budget_exhausted": WriteBudgetError,
    "overloaded": OverloadedError,
    "not_implemented": UnsupportedError,
}


def error_class(status: int, code: str, message: str) -> type:
    if code == "failed_precondition" and "fenced" in message:
        # A fenced commit has no code of its own on the wire: the server
        # sends failed_precondition with "fenced" in the message.
        return FencedError
    return _BY_CODE.get(code) or _BY_STATUS.get(status, WarrenError)


def retry_after(value: Optional[str]) -> Optional[float]:
    """The seconds of a Retry-After header (the delta-seconds form)."""
    try:
        return float(value) if value else None
    except ValueError:
        return None


def error_for(status: int, body: bytes, retry: Optional[str] = None) -> WarrenError:
    code, message = "", ""
    try:
        detail = json.loads(body.decode("utf-8"))["error"]
        code, message = detail.get("code", ""), detail.get("message", "")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        message = body.decode("utf-8", "replace").strip()
    if not message:
        message = f"HTTP {status}"
    return error_class(status, code, message)(message, status, code, retry_after(retry))


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
    U+FFFD); stdout_bytes/stderr_bytes are exact. durability is the level
    the command's writes reached before the reply (memory, local or
    committed) and generation the committed generation holding them
    (committed only, else 0)."""

    exit_code: int
    stdout_bytes: bytes = b""
    stderr_bytes: bytes = b""
    duration_ms: float = 0.0
    limit: str = ""
    truncated: bool = False
    durability: str = ""
    generation: int = 0
    cpu_seconds: float = 0.0
    rungs: Dict[str, int] = field(default_factory=dict)
    fallbacks: Dict[str, int] = field(default_factory=dict)

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @staticmethod
    def of(ev: dict, out: bytes, err: bytes) -> "CommandResult":
        return CommandResult(ev.get("exit", 0), out, err, ev.get("duration_ms", 0.0), ev.get("limit", ""), ev.get("truncated", False),
                             ev.get("durability", ""), ev.get("generation", 0), ev.get("cpu_seconds", 0.0),
                             dict(ev.get("rungs") or {}), dict(ev.get("fallbacks") or {}))


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


DURABILITY_LEVELS = ("memory", "local", "committed")


def check_durability(level: Optional[str]) -> None:
    if level is not None and level not in DURABILITY_LEVELS:
        raise InvalidArgumentError(f"durability {level!r}: want 'memory', 'local' or 'committed'")


def duration(seconds: float) -> str:
    """Seconds as a Go duration the server parses ("1500ms", "-1000ms")."""
    return f"{int(round(seconds * 1000))}ms"


def exec_body(cmd: str, cwd, envs, timeout, stdin, session, durability=None, commands=None) -> dict:
    body: Dict[str, Any] = {"script": cmd}
    if cwd:
        body["cwd"] = cwd
    if envs:
        body["env"] = dict(envs)
    if timeout is not None:
        body["timeout"] = duration(timeout)
    if stdin is not None:
        body["stdin"] = stdin if isinstance(stdin, str) else stdin.decode("utf-8")
    if session:
        body["session"] = session
    check_durability(durability)
    if durability:
        body["durability"] = durability
    if commands:
        body["commands"] = commands
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
            code, message = d.get("code", ""), d.get("message", "exec failed")
            raise error_class(0, code, message)(message, 0, code)
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
        return CommandResult.of(ev, bytes(self.out), bytes(self.err))

    def done(self) -> CommandResult:
        if self.result is None:
            raise UnavailableError("the exec stream ended without an exit status (connection lost)")
        return self.result


def result_of(d: dict) -> CommandResult:
    return CommandResult.of(d, d.get("stdout", "").encode("utf-8"), d.get("stderr", "").encode("utf-8"))


@dataclass
class NetworkPolicy:
    """A sandbox's egress policy: default deny; allow and deny hold names
    ("api.example.com"), suffixes ("*.example.com"), addresses or CIDRs,
    each optionally ":PORT", or "*". Deny wins."""

    allow: List[str] = field(default_factory=list)
    deny: List[str] = field(default_factory=list)

    @staticmethod
    def of(d: Optional[dict]) -> "NetworkPolicy":
        d = d or {}
        return NetworkPolicy(list(d.get("allow") or []), list(d.get("deny") or []))

    def wire(self) -> dict:
        return {k: list(v) for k, v in (("allow", self.allow), ("deny", self.deny)) if v}


@dataclass
class Secret:
    """A credential the sandbox never sees: its env var NAME holds a
    placeholder, which the egress layer replaces with value only on
    requests over TLS to hosts (headers and query; the body too with
    body=True). Kept in the server's memory only."""

    name: str
    value: str
    hosts: List[str]
    body: bool = False

    def wire(self) -> dict:
        d: Dict[str, Any] = {"name": self.name, "value": self.value, "hosts": list(self.hosts)}
        if self.body:
            d["body"] = True
        return d


@dataclass
class SecretInfo:
    """A secret as the API shows it: the placeholder, never the value."""

    name: str
    placeholder: str
    hosts: List[str]


@dataclass
class NetworkDecision:
    """One egress decision of the sandbox's audit list."""

    time: str
    host: str
    port: int
    allowed: bool
    reason: str
    addr: str = ""


@dataclass
class NetworkStatus:
    """The policy, the secrets (placeholders), the last decisions (oldest
    first, at most 256) and how many decisions were made in all."""

    policy: NetworkPolicy
    secrets: List[SecretInfo]
    audit: List[NetworkDecision]
    decisions: int

    @staticmethod
    def of(d: dict) -> "NetworkStatus":
        return NetworkStatus(
            NetworkPolicy.of(d.get("policy")),
            [SecretInfo(s.get("name", ""), s.get("placeholder", ""), list(s.get("hosts") or [])) for s in d.get("secrets") or []],
            [NetworkDecision(a.get("time", ""), a.get("host", ""), a.get("port", 0), a.get("allowed", False), a.get("reason", ""), a.get("addr", ""))
             for a in d.get("audit") or []],
            d.get("decisions", 0))


def secrets_wire(secrets) -> list:
    out = []
    for s in secrets:
        if isinstance(s, dict):
            s = Secret(s["name"], s["value"], list(s["hosts"]), bool(s.get("body", False)))
        if not isinstance(s, Secret):
            raise InvalidArgumentError(f"secret {s!r}: want a warren.Secret or a dict with name, value and hosts")
        out.append(s.wire())
    return out


def network_wire(network) -> dict:
    if isinstance(network, NetworkPolicy):
        return network.wire()
    if isinstance(network, dict):
        unknown = set(network) - {"allow", "deny"}
        if unknown:
            raise InvalidArgumentError(f"network {sorted(unknown)}: a policy has only allow and deny")
        return NetworkPolicy.of(network).wire()
    raise InvalidArgumentError(f"network {network!r}: want a warren.NetworkPolicy or a dict with allow and deny")


@dataclass
class Generation:
    """A committed, retained generation of a sandbox. Pass it as
    from_generation to create a sandbox from it. pinned_by names what keeps
    it past its retention ("snapshot:NAME", "sandbox:ID")."""

    sandbox: str
    number: int
    created_at: str
    epoch: int
    head: bool = False
    pinned_by: List[str] = field(default_factory=list)

    @staticmethod
    def of(sandbox: str, d: dict) -> "Generation":
        return Generation(sandbox, d["number"], d.get("created_at", ""), d.get("epoch", 0), d.get("head", False), list(d.get("pinned_by") or []))


@dataclass
class Volume:
    """Durable storage of the tenant that outlives any sandbox. size is its
    quota in bytes; attached_to the sandbox holding it read-write ("" for
    none), readers those holding it read-only."""

    name: str
    size: int
    used: int = 0
    attached_to: str = ""
    readers: List[str] = field(default_factory=list)
    generation: int = 0
    created_at: str = ""

    @staticmethod
    def of(d: dict) -> "Volume":
        return Volume(d["name"], d.get("size", 0), d.get("used", 0), d.get("attached_to", "") or "",
                      list(d.get("readers") or []), d.get("generation", 0), d.get("created_at", ""))


@dataclass
class VolumeMount:
    """Attaches a volume at a sandbox's create: Sandbox.create(volumes=[VolumeMount("data", "/data")])
    (or the CLI's "data:/data[:ro]" string)."""

    name: str
    path: str
    read_only: bool = False

    def wire(self) -> dict:
        d: Dict[str, Any] = {"name": self.name, "path": self.path}
        if self.read_only:
            d["read_only"] = True
        return d


def volume_mount(v) -> dict:
    """A VolumeMount, a dict or "NAME:/path[:ro]" as the wire's object."""
    if isinstance(v, VolumeMount):
        return v.wire()
    if isinstance(v, dict):
        return VolumeMount(v["name"], v["path"], bool(v.get("read_only", False))).wire()
    if isinstance(v, str):
        parts = v.split(":")
        if len(parts) in (2, 3) and parts[0] and parts[1].startswith("/") and (len(parts) == 2 or parts[2] in ("ro", "rw")):
            return VolumeMount(parts[0], parts[1], len(parts) == 3 and parts[2] == "ro").wire()
        raise ValueError(f"volume {v!r}: want NAME:/path or NAME:/path:ro")
    raise TypeError(f"volume {v!r}: want a VolumeMount, a dict or a NAME:/path[:ro] string")


@dataclass
class Drive:
    """A shared drive: many sandboxes mount it read-write at once (close-to-open:
    what one closed, another's next open sees). size is its quota (0: none)."""

    name: str
    size: int = 0
    used: int = 0
    created_at: str = ""

    @staticmethod
    def of(d: dict) -> "Drive":
        return Drive(d["name"], d.get("size", 0), d.get("used", 0), d.get("created_at", ""))


@dataclass
class DriveMount:
    """A drive mounted in a sandbox: Sandbox.create(drives=[DriveMount("team", "/team")])
    or sandbox.mount("team", "/team"); "NAME:/path[:ro]" strings work too."""

    drive: str
    path: str
    read_only: bool = False

    def wire(self) -> dict:
        d: Dict[str, Any] = {"drive": self.drive, "path": self.path}
        if self.read_only:
            d["read_only"] = True
        return d

    @staticmethod
    def of(d: dict) -> "DriveMount":
        return DriveMount(d["drive"], d["path"], bool(d.get("read_only", False)))


def drive_mount(v) -> dict:
    """A DriveMount, a dict or "NAME:/path[:ro]" as the wire's object."""
    if isinstance(v, DriveMount):
        return v.wire()
    if isinstance(v, dict):
        return DriveMount(v["drive"], v["path"], bool(v.get("read_only", False))).wire()
    if isinstance(v, str):
        m = volume_mount(v)
        return DriveMount(m["name"], m["path"], m.get("read_only", False)).wire()
    raise TypeError(f"drive {v!r}: want a DriveMount, a dict or a NAME:/path[:ro] string")


def size_bytes(size) -> int:
    """An int of bytes, or a string with a binary suffix ("10G", "512MiB")."""
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise TypeError(f"size {size!r}: want bytes (int) or a string like '10G'")
    if isinstance(size, int):
        n = size
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?B)?\s*", size, re.IGNORECASE)
        if not m:
            raise ValueError(f"size {size!r}: want bytes or a number with K, M, G or T")
        n = int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())
    if n <= 0:
        raise ValueError(f"size {size!r}: must be more than 0 bytes")
    return n


@dataclass
class Retention:
    """Which generations stay besides the head and the pinned ones: the
    last keep_last and those younger than keep_for seconds (negative: none
    by age). None takes the server's default (10 and one hour)."""

    keep_last: Optional[int] = None
    keep_for: Optional[float] = None

    def wire(self) -> dict:
        d: Dict[str, Any] = {}
        if self.keep_last is not None:
            d["keep_last"] = self.keep_last
        if self.keep_for is not None:
            d["keep_for"] = duration(self.keep_for)
        return d


@dataclass
class WriteInfo:
    """What a file write reached: durability (memory, local or committed)
    and, for committed, the generation holding it."""

    path: str
    durability: str = ""
    generation: int = 0


def write_info(path: str, headers) -> WriteInfo:
    gen = headers.get("Warren-Generation") or "0"
    return WriteInfo(path, headers.get("Warren-Durability") or "", int(gen) if gen.isdigit() else 0)


def generation_ref(ref) -> dict:
    if isinstance(ref, Generation):
        return {"sandbox": ref.sandbox, "generation": ref.number}
    if isinstance(ref, (tuple, list)) and len(ref) == 2:
        return {"sandbox": str(ref[0]), "generation": int(ref[1])}
    if isinstance(ref, dict) and set(ref) == {"sandbox", "generation"}:
        return {"sandbox": str(ref["sandbox"]), "generation": int(ref["generation"])}
    raise InvalidArgumentError(f"from_generation {ref!r}: want a warren.Generation, (sandbox_id, number) or {{'sandbox', 'generation'}}")


def label_params(labels) -> list:
    return [("label", f"{k}={v}") for k, v in (labels or {}).items()]


def create_body(image=None, snapshot=None, envs=None, cwd=None, labels=None, limits=None, ttl=None, *,
                user=None, hostname=None, standby_after=None, standby_with_jobs=False, durability=None, security=None, commands=None,
                node_selector=None, network=None, secrets=None, from_generation=None, retention=None, volumes=None, drives=None) -> dict:
    body: Dict[str, Any] = {}
    for k, v in (("image", image), ("snapshot", snapshot), ("env", envs), ("cwd", cwd), ("labels", labels), ("limits", limits),
                 ("user", user), ("hostname", hostname), ("security", security), ("commands", commands),
                 ("node_selector", node_selector)):
        if v:
            body[k] = v
    if ttl:
        body["ttl"] = duration(ttl)
    if standby_after is not None:
        body["standby_after"] = duration(standby_after)
    if standby_with_jobs:
        body["standby_with_jobs"] = True
    check_durability(durability)
    if durability:
        body["durability"] = durability
    if network is not None:
        body["network"] = network_wire(network)
    if secrets:
        body["secrets"] = secrets_wire(secrets)
    if from_generation is not None:
        body["from_generation"] = generation_ref(from_generation)
    if retention is not None:
        body["retention"] = retention.wire() if isinstance(retention, Retention) else Retention(**retention).wire()
    if volumes:
        body["volumes"] = [volume_mount(v) for v in volumes]
    if drives:
        body["drives"] = [drive_mount(d) for d in drives]
    return body


def network_body(allow, deny, secrets) -> dict:
    body = NetworkPolicy(list(allow or []), list(deny or [])).wire()
    if secrets is not None:
        body["secrets"] = secrets_wire(secrets)
    return body


def read_params(path, offset, length) -> dict:
    params = {"path": path}
    if offset:
        params["offset"] = str(offset)
    if length:
        params["length"] = str(length)
    return params


def write_params(path, append, mode, durability=None) -> dict:
    params = {"path": path, "mode": "append" if append else "truncate"}
    if mode is not None:
        params["perm"] = format(mode, "o")
    check_durability(durability)
    if durability:
        params["durability"] = durability
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
        body["timeout"] = duration(timeout)
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
