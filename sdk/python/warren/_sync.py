"""The synchronous client: Sandbox, with .commands and .files."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import httpx

from . import _core as core
from ._core import CommandResult, EntryInfo, Generation, NetworkDecision, NetworkStatus, DriveMount, Drive, Request, Retention, Secret, Volume, VolumeMount, WriteInfo


class _Transport:
    def __init__(self, api_url: Optional[str], api_key: Optional[str], timeout: float = 300.0):
        self.url, self.key = core.resolve(api_url, api_key)
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout, connect=10.0))

    def send(self, req: Request) -> httpx.Response:
        try:
            resp = self.http.request(req.method, req.path, params=req.params or None, json=req.json,
                                     content=req.content, headers=req.headers or None)
        except httpx.TransportError as e:
            raise core.UnavailableError(f"cannot reach warren at {self.url}: {e}") from e
        if resp.status_code >= 400:
            raise core.error_for(resp.status_code, resp.content, resp.headers.get("Retry-After"))
        return resp

    def json(self, req: Request) -> Any:
        return self.send(req).json()

    def stream(self, req: Request, reader: core.EventReader) -> CommandResult:
        try:
            with self.http.stream(req.method, req.path, params=req.params or None, json=req.json) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    raise core.error_for(resp.status_code, resp.content, resp.headers.get("Retry-After"))
                # Leaving this block early (a callback raised) closes the
                # connection, and the server cancels the exec.
                for line in resp.iter_lines():
                    reader.line(line)
        except httpx.TransportError as e:
            raise core.UnavailableError(f"connection to warren lost during exec: {e}") from e
        return reader.done()


class CommandHandle:
    """A background command."""

    def __init__(self, sandbox: "Sandbox", pid: int):
        self.sandbox, self.pid = sandbox, pid

    def wait(self, on_stdout=None, on_stderr=None) -> CommandResult:
        """Stream the output (from the start, within the server's replay
        bound) until the command exits."""
        t = self.sandbox._t
        return t.stream(core.request("attach_process", id=self.sandbox.id, pid=self.pid), core.EventReader(on_stdout, on_stderr))

    def send_stdin(self, data: Union[str, bytes], close: bool = False) -> None:
        params = {"close": "true"} if close else {}
        self.sandbox._t.send(core.request("stdin_process", id=self.sandbox.id, pid=self.pid, params=params, content=core.encode(data)))

    def kill(self, signal: str = "KILL") -> None:
        self.sandbox._t.send(core.request("signal_process", id=self.sandbox.id, pid=self.pid, json_body={"signal": signal}))

    def info(self) -> Dict[str, Any]:
        return self.sandbox._t.json(core.request("get_process", id=self.sandbox.id, pid=self.pid))

    def wait_exit(self) -> CommandResult:
        """Wait for the exit without the output (wait() streams it): the
        exit code, limit, durability and generation."""
        return core.result_of(self.sandbox._t.json(core.request("wait_process", id=self.sandbox.id, pid=self.pid)))


class PtyHandle:
    """A process on a terminal: an interactive shell unless created with cmd."""

    def __init__(self, sandbox: "Sandbox", pid: int):
        self.sandbox, self.pid = sandbox, pid

    def send_input(self, data: Union[str, bytes]) -> None:
        """Keyboard input ("\\x03" is ^C, "\\x04" ^D, "\\r" Enter)."""
        self.sandbox.pty.send_input(self.pid, data)

    def resize(self, cols: int, rows: int) -> None:
        self.sandbox.pty.resize(self.pid, cols, rows)

    def kill(self, signal: str = "HUP") -> None:
        self.sandbox.pty.kill(self.pid, signal)

    def wait(self, on_data: Optional[Callable[[bytes], Any]] = None) -> CommandResult:
        """Stream the display (bytes, from the start within the server's
        replay bound) to on_data until the shell exits; exit_code is its
        status."""
        req = core.request("attach_process", id=self.sandbox.id, pid=self.pid)
        return self.sandbox._t.stream(req, core.EventReader(None, None, on_data))


class Pty:
    """Terminals: create(cols, rows), send_input, resize, kill."""

    def __init__(self, sandbox: "Sandbox"):
        self._sb = sandbox

    def create(self, cols: int = 80, rows: int = 24, *, cmd: Optional[str] = None, cwd: Optional[str] = None,
               envs: Optional[Dict[str, str]] = None, session: Optional[str] = None,
               timeout: Optional[float] = None) -> PtyHandle:
        body = core.pty_body(cols, rows, cmd, cwd, envs, session, timeout)
        p = self._sb._t.json(core.request("start_process", id=self._sb.id, json_body=body))
        return PtyHandle(self._sb, p["pid"])

    def connect(self, pid: int) -> PtyHandle:
        return PtyHandle(self._sb, pid)

    def send_input(self, pid: int, data: Union[str, bytes]) -> None:
        self._sb._t.send(core.request("stdin_process", id=self._sb.id, pid=pid, content=core.encode(data)))

    def resize(self, pid: int, cols: int, rows: int) -> None:
        self._sb._t.send(core.request("resize_process", id=self._sb.id, pid=pid, json_body={"cols": cols, "rows": rows}))

    def kill(self, pid: int, signal: str = "HUP") -> None:
        self._sb._t.send(core.request("signal_process", id=self._sb.id, pid=pid, json_body={"signal": signal}))


class Commands:
    def __init__(self, sandbox: "Sandbox"):
        self._sb = sandbox

    def run(self, cmd: str, *, on_stdout: Optional[Callable[[str], Any]] = None, on_stderr: Optional[Callable[[str], Any]] = None,
            cwd: Optional[str] = None, envs: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
            stdin: Union[str, bytes, None] = None, background: bool = False, session: Optional[str] = None,
            durability: Optional[str] = None, commands: Optional[str] = None):
        """Run cmd in the sandbox's shell. Returns a CommandResult (a non-zero
        exit_code is not an exception), or a CommandHandle with background=True.
        timeout is in seconds. durability ("memory", "local" or "committed";
        default the sandbox's) is how far the command's writes must go before
        the result returns: result.durability says what they reached and
        result.generation the committed generation. commands is this run's
        commands policy (e.g. "native-first", "git=native")."""
        body = core.exec_body(cmd, cwd, envs, timeout, stdin, session, durability, commands)
        t = self._sb._t
        if background:
            p = t.json(core.request("start_process", id=self._sb.id, json_body=body))
            return CommandHandle(self._sb, p["pid"])
        return t.stream(core.request("exec", id=self._sb.id, json_body=body), core.EventReader(on_stdout, on_stderr))

    def list(self) -> List[Dict[str, Any]]:
        return self._sb._t.json(core.request("list_processes", id=self._sb.id))

    def connect(self, pid: int) -> CommandHandle:
        return CommandHandle(self._sb, pid)


class WatchHandle:
    """A live watch: iterate it for WatchEvents (it ends after the closed
    event); close() stops it."""

    def __init__(self, t: "_Transport", req: Request):
        self._closed = False
        self._cm = t.http.stream(req.method, req.path, params=req.params or None, timeout=httpx.Timeout(None, connect=10.0))
        try:
            resp = self._cm.__enter__()
        except httpx.TransportError as e:
            raise core.UnavailableError(f"cannot reach warren at {t.url}: {e}") from e
        if resp.status_code >= 400:
            resp.read()
            self._cm.__exit__(None, None, None)
            raise core.error_for(resp.status_code, resp.content, resp.headers.get("Retry-After"))
        self._lines = resp.iter_lines()
        for line in self._lines:
            ev = core.watch_event(line)
            if ev is not None and ev.type == "ready":
                break

    def __iter__(self):
        try:
            for line in self._lines:
                ev = core.watch_event(line)
                if ev is None:
                    continue
                yield ev
                if ev.type == "closed":
                    return
        except httpx.TransportError as e:
            raise core.UnavailableError(f"watch stream lost: {e}") from e
        finally:
            self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._cm.__exit__(None, None, None)

    def __enter__(self) -> "WatchHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Files:
    def __init__(self, sandbox: "Sandbox"):
        self._sb = sandbox

    def watch(self, path: str, recursive: bool = False) -> WatchHandle:
        """Watch a directory (its children, or everything under it with
        recursive). Returns once the watch is live; a missing path raises
        NotFoundError, a file InvalidArgumentError."""
        return WatchHandle(self._sb._t, core.request("watch_files", id=self._sb.id, params=core.watch_params(path, recursive)))

    def read(self, path: str, format: str = "text", offset: int = 0, length: int = 0) -> Union[str, bytes]:
        """format="text" (UTF-8) or "bytes"."""
        core.check_format(format)
        data = self._sb._t.send(core.request("get_files", id=self._sb.id, params=core.read_params(path, offset, length))).content
        return data if format == "bytes" else data.decode("utf-8")

    def write(self, path: str, data: Union[str, bytes], *, append: bool = False, mode: Optional[int] = None,
              durability: Optional[str] = None) -> WriteInfo:
        """Write a file atomically (or append). durability ("memory", "local"
        or "committed"; default the sandbox's) is how far the write must go
        before this returns; the WriteInfo says what it reached. Over the
        sandbox's uncommitted budget it raises WriteBudgetError (retry after
        its retry_after seconds)."""
        params = core.write_params(path, append, mode, durability)
        resp = self._sb._t.send(core.request("put_files", id=self._sb.id, params=params, content=core.encode(data),
                                             headers={"Content-Type": "application/octet-stream"}))
        return core.write_info(path, resp.headers)

    def list(self, path: str, depth: int = 0, recursive: bool = False) -> List[EntryInfo]:
        params = core.list_params(path, depth, recursive)
        return [EntryInfo.of(d) for d in self._sb._t.json(core.request("get_files", id=self._sb.id, params=params))]

    def stat(self, path: str) -> EntryInfo:
        return EntryInfo.of(self._sb._t.json(core.request("get_files", id=self._sb.id, params={"path": path, "stat": "true"})))

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
            return True
        except core.NotFoundError:
            return False

    def remove(self, path: str, recursive: bool = False) -> None:
        params = {"path": path}
        if recursive:
            params["recursive"] = "true"
        self._sb._t.send(core.request("delete_files", id=self._sb.id, params=params))

    def rename(self, old: str, new: str) -> None:
        self._sb._t.send(core.request("move", id=self._sb.id, json_body={"from": old, "to": new}))

    def make_dir(self, path: str) -> None:
        self._sb._t.send(core.request("mkdir", id=self._sb.id, json_body={"path": path}))

    def upload_tar(self, dir: str, data: bytes) -> None:
        self._sb._t.send(core.request("put_files", id=self._sb.id, params={"path": dir, "format": "tar"}, content=data,
                                      headers={"Content-Type": "application/x-tar"}))

    def download_tar(self, dir: str) -> bytes:
        return self._sb._t.send(core.request("get_files", id=self._sb.id, params={"path": dir, "format": "tar"})).content


class Network:
    """The sandbox's egress: policy, secrets and audit list."""

    def __init__(self, sandbox: "Sandbox"):
        self._sb = sandbox

    def get(self) -> NetworkStatus:
        """The policy, the secrets (names and placeholders, never values) and
        the last decisions."""
        return NetworkStatus.of(self._sb._t.json(core.request("get_network", id=self._sb.id)))

    def set(self, allow: Optional[List[str]] = None, deny: Optional[List[str]] = None,
            secrets: Optional[List[Union[Secret, Dict[str, Any]]]] = None) -> NetworkStatus:
        """Replace the policy (the next request sees it; allow=None denies
        everything). secrets, when given, replace the secrets ([] removes
        them all; None keeps them)."""
        body = core.network_body(allow, deny, secrets)
        return NetworkStatus.of(self._sb._t.json(core.request("set_network", id=self._sb.id, json_body=body)))

    def audit(self) -> List[NetworkDecision]:
        """The last egress decisions, oldest first (at most 256)."""
        return self.get().audit


class Sandbox:
    """A warren sandbox. Sandbox.create(...) makes one; Sandbox.connect(id)
    reaches an existing one. api_url/api_key default to $WARREN_SERVER and
    $WARREN_API_KEY."""

    def __init__(self, info: Dict[str, Any], transport: _Transport):
        self._t, self.info = transport, info
        self.id: str = info["id"]
        self.commands = Commands(self)
        self.files = Files(self)
        self.pty = Pty(self)
        self.network = Network(self)

    @classmethod
    def create(cls, *, image: Optional[str] = None, snapshot: Optional[str] = None, envs: Optional[Dict[str, str]] = None,
               cwd: Optional[str] = None, labels: Optional[Dict[str, str]] = None, limits: Optional[Dict[str, Any]] = None,
               ttl: Optional[float] = None, network: Union[core.NetworkPolicy, Dict[str, List[str]], None] = None,
               secrets: Optional[List[Union[Secret, Dict[str, Any]]]] = None, durability: Optional[str] = None,
               from_generation: Union[Generation, tuple, Dict[str, Any], None] = None,
               retention: Union[Retention, Dict[str, Any], None] = None, standby_after: Optional[float] = None, standby_with_jobs: bool = False,
               user: Optional[str] = None, hostname: Optional[str] = None, security: Optional[str] = None,
               commands: Optional[str] = None, node_selector: Optional[Dict[str, str]] = None,
               volumes: Optional[List[Union[VolumeMount, Dict[str, Any], str]]] = None,
               drives: Optional[List[Union[DriveMount, Dict[str, Any], str]]] = None,
               api_url: Optional[str] = None, api_key: Optional[str] = None) -> "Sandbox":
        """Create a sandbox. network={"allow": [...], "deny": [...]} lets it
        out (default: no network); secrets=[Secret(name, value, hosts)] puts
        placeholders in its env that only those hosts see replaced.
        durability is its default ack level; from_generation a Generation
        (or (sandbox_id, number)) to start from; retention which
        generations stay. ttl and standby_after are in seconds. volumes
        attaches volumes: [VolumeMount(name, path, read_only)] or "NAME:/path[:ro]"."""
        t = _Transport(api_url, api_key)
        body = core.create_body(image, snapshot, envs, cwd, labels, limits, ttl, user=user, hostname=hostname,
                                standby_after=standby_after, standby_with_jobs=standby_with_jobs, durability=durability, security=security, commands=commands,
                                node_selector=node_selector, network=network, secrets=secrets,
                                from_generation=from_generation, retention=retention, volumes=volumes, drives=drives)
        return cls(t.json(core.request("create", json_body=body)), t)

    @classmethod
    def connect(cls, sandbox_id: str, *, api_url: Optional[str] = None, api_key: Optional[str] = None) -> "Sandbox":
        t = _Transport(api_url, api_key)
        return cls(t.json(core.request("get", id=sandbox_id)), t)

    @classmethod
    def list(cls, *, labels: Optional[Dict[str, str]] = None, api_url: Optional[str] = None, api_key: Optional[str] = None) -> List["Sandbox"]:
        t = _Transport(api_url, api_key)
        return [cls(d, t) for d in t.json(core.request("list", params=core.label_params(labels)))]

    def refresh(self) -> Dict[str, Any]:
        self.info = self._t.json(core.request("get", id=self.id))
        return self.info

    @property
    def state(self) -> str:
        return self.refresh()["state"]

    def hibernate(self) -> None:
        self.info = self._t.json(core.request("hibernate", id=self.id))

    def resume(self) -> None:
        self.info = self._t.json(core.request("resume", id=self.id))

    def fork(self, count: int = 1, labels: Optional[Dict[str, str]] = None) -> List["Sandbox"]:
        body: Dict[str, Any] = {"count": count}
        if labels:
            body["labels"] = dict(labels)
        res = self._t.json(core.request("fork", id=self.id, json_body=body))
        return [Sandbox(d, self._t) for d in res["sandboxes"]]

    def snapshot(self, name: str) -> Dict[str, Any]:
        """A named snapshot. Of a sandbox in standby it is its head
        generation, which the snapshot then pins (see generations())."""
        return self._t.json(core.request("create_snapshot", id=self.id, json_body={"name": name}))

    def generations(self) -> List[Generation]:
        """The committed generations its retention keeps, oldest first."""
        return [Generation.of(self.id, d) for d in self._t.json(core.request("list_generations", id=self.id))]

    def mount(self, drive: str, path: str, read_only: bool = False) -> List[DriveMount]:
        """Mount a shared drive at path (now if running, at resume in standby); the mount list."""
        body = DriveMount(drive, path, read_only).wire()
        return [DriveMount.of(d) for d in self._t.json(core.request("mount_drive", id=self.id, json_body=body))]

    def unmount(self, path: str) -> List[DriveMount]:
        """Unmount the drive at path (files still open there lose what they had not closed)."""
        return [DriveMount.of(d) for d in self._t.json(core.request("unmount_drive", id=self.id, params={"path": path}))]

    def mounts(self) -> List[DriveMount]:
        return [DriveMount.of(d) for d in self._t.json(core.request("list_mounts", id=self.id))]

    def kill(self) -> None:
        """Delete the sandbox and its files."""
        self._t.send(core.request("delete", id=self.id))

    def close(self) -> None:
        self._t.http.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Client:
    """Tenant-wide calls that are not about one sandbox."""

    def __init__(self, *, api_url: Optional[str] = None, api_key: Optional[str] = None):
        self._t = _Transport(api_url, api_key)

    def health(self) -> bool:
        return self._t.json(core.request("health")).get("status") == "ok"

    def create_key(self, tenant: str) -> str:
        return self._t.json(core.request("create_key", json_body={"tenant": tenant}))["key"]

    def list_snapshots(self) -> List[Dict[str, Any]]:
        return self._t.json(core.request("list_snapshots"))

    def get_snapshot(self, name: str) -> Dict[str, Any]:
        return self._t.json(core.request("get_snapshot", name=name))

    def delete_snapshot(self, name: str) -> None:
        self._t.send(core.request("delete_snapshot", name=name))

    def list_images(self) -> List[Dict[str, Any]]:
        return self._t.json(core.request("list_images"))

    def build_image(self, name: str, tar: bytes) -> Dict[str, Any]:
        return self._t.json(core.request("build_image", params={"name": name}, content=tar, headers={"Content-Type": "application/x-tar"}))

    def delete_image(self, name: str) -> None:
        """Remove one of the tenant's images (refused while a sandbox uses it)."""
        self._t.send(core.request("delete_image", name=name))

    def create_volume(self, name: str, size: Union[int, str]) -> Volume:
        """A volume of size bytes (an int, or "10G"-style binary units)."""
        return Volume.of(self._t.json(core.request("create_volume", json_body={"name": name, "size": core.size_bytes(size)})))

    def list_volumes(self) -> List[Volume]:
        return [Volume.of(d) for d in self._t.json(core.request("list_volumes"))]

    def get_volume(self, name: str) -> Volume:
        return Volume.of(self._t.json(core.request("get_volume", name=name)))

    def resize_volume(self, name: str, size: Union[int, str]) -> Volume:
        """Grow a volume (a smaller size is refused: InvalidArgumentError)."""
        return Volume.of(self._t.json(core.request("resize_volume", name=name, json_body={"size": core.size_bytes(size)})))

    def delete_volume(self, name: str) -> None:
        """Delete a volume and its data (refused while a sandbox holds it: ConflictError)."""
        self._t.send(core.request("delete_volume", name=name))

    def create_drive(self, name: str, size: Union[int, str, None] = None) -> Drive:
        """A shared drive, with a quota of size bytes (an int or "10G"; None: no quota)."""
        body: Dict[str, Any] = {"name": name}
        if size is not None:
            body["size"] = core.size_bytes(size)
        return Drive.of(self._t.json(core.request("create_drive", json_body=body)))

    def list_drives(self) -> List[Drive]:
        return [Drive.of(d) for d in self._t.json(core.request("list_drives"))]

    def get_drive(self, name: str) -> Drive:
        return Drive.of(self._t.json(core.request("get_drive", name=name)))

    def delete_drive(self, name: str) -> None:
        """Delete a drive and its files (refused while mounted: ConflictError)."""
        self._t.send(core.request("delete_drive", name=name))

    def close(self) -> None:
        self._t.http.close()
