"""The asynchronous client: AsyncSandbox, the same surface as Sandbox with
awaitable methods, over the same core (requests, events, errors)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import httpx

from . import _core as core
from ._core import CommandResult, EntryInfo, Generation, NetworkDecision, NetworkStatus, DriveMount, Drive, Request, Retention, Secret, Volume, VolumeMount, WriteInfo


class _AsyncTransport:
    def __init__(self, api_url: Optional[str], api_key: Optional[str], timeout: float = 300.0):
        self.url, self.key = core.resolve(api_url, api_key)
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        self.http = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout, connect=10.0))

    async def send(self, req: Request) -> httpx.Response:
        try:
            resp = await self.http.request(req.method, req.path, params=req.params or None, json=req.json,
                                           content=req.content, headers=req.headers or None)
        except httpx.TransportError as e:
            raise core.UnavailableError(f"cannot reach warren at {self.url}: {e}") from e
        if resp.status_code >= 400:
            raise core.error_for(resp.status_code, resp.content, resp.headers.get("Retry-After"))
        return resp

    async def json(self, req: Request) -> Any:
        return (await self.send(req)).json()

    async def stream(self, req: Request, reader: core.EventReader) -> CommandResult:
        try:
            async with self.http.stream(req.method, req.path, params=req.params or None, json=req.json) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise core.error_for(resp.status_code, resp.content, resp.headers.get("Retry-After"))
                async for line in resp.aiter_lines():
                    reader.line(line)
        except httpx.TransportError as e:
            raise core.UnavailableError(f"connection to warren lost during exec: {e}") from e
        return reader.done()


class AsyncCommandHandle:
    def __init__(self, sandbox: "AsyncSandbox", pid: int):
        self.sandbox, self.pid = sandbox, pid

    async def wait(self, on_stdout=None, on_stderr=None) -> CommandResult:
        req = core.request("attach_process", id=self.sandbox.id, pid=self.pid)
        return await self.sandbox._t.stream(req, core.EventReader(on_stdout, on_stderr))

    async def send_stdin(self, data: Union[str, bytes], close: bool = False) -> None:
        params = {"close": "true"} if close else {}
        await self.sandbox._t.send(core.request("stdin_process", id=self.sandbox.id, pid=self.pid, params=params, content=core.encode(data)))

    async def kill(self, signal: str = "KILL") -> None:
        await self.sandbox._t.send(core.request("signal_process", id=self.sandbox.id, pid=self.pid, json_body={"signal": signal}))

    async def info(self) -> Dict[str, Any]:
        return await self.sandbox._t.json(core.request("get_process", id=self.sandbox.id, pid=self.pid))

    async def wait_exit(self) -> CommandResult:
        return core.result_of(await self.sandbox._t.json(core.request("wait_process", id=self.sandbox.id, pid=self.pid)))


class AsyncPtyHandle:
    def __init__(self, sandbox: "AsyncSandbox", pid: int):
        self.sandbox, self.pid = sandbox, pid

    async def send_input(self, data: Union[str, bytes]) -> None:
        await self.sandbox.pty.send_input(self.pid, data)

    async def resize(self, cols: int, rows: int) -> None:
        await self.sandbox.pty.resize(self.pid, cols, rows)

    async def kill(self, signal: str = "HUP") -> None:
        await self.sandbox.pty.kill(self.pid, signal)

    async def wait(self, on_data: Optional[Callable[[bytes], Any]] = None) -> CommandResult:
        req = core.request("attach_process", id=self.sandbox.id, pid=self.pid)
        return await self.sandbox._t.stream(req, core.EventReader(None, None, on_data))


class AsyncPty:
    def __init__(self, sandbox: "AsyncSandbox"):
        self._sb = sandbox

    async def create(self, cols: int = 80, rows: int = 24, *, cmd: Optional[str] = None, cwd: Optional[str] = None,
                     envs: Optional[Dict[str, str]] = None, session: Optional[str] = None,
                     timeout: Optional[float] = None) -> AsyncPtyHandle:
        body = core.pty_body(cols, rows, cmd, cwd, envs, session, timeout)
        p = await self._sb._t.json(core.request("start_process", id=self._sb.id, json_body=body))
        return AsyncPtyHandle(self._sb, p["pid"])

    def connect(self, pid: int) -> AsyncPtyHandle:
        return AsyncPtyHandle(self._sb, pid)

    async def send_input(self, pid: int, data: Union[str, bytes]) -> None:
        await self._sb._t.send(core.request("stdin_process", id=self._sb.id, pid=pid, content=core.encode(data)))

    async def resize(self, pid: int, cols: int, rows: int) -> None:
        await self._sb._t.send(core.request("resize_process", id=self._sb.id, pid=pid, json_body={"cols": cols, "rows": rows}))

    async def kill(self, pid: int, signal: str = "HUP") -> None:
        await self._sb._t.send(core.request("signal_process", id=self._sb.id, pid=pid, json_body={"signal": signal}))


class AsyncCommands:
    def __init__(self, sandbox: "AsyncSandbox"):
        self._sb = sandbox

    async def run(self, cmd: str, *, on_stdout: Optional[Callable[[str], Any]] = None, on_stderr: Optional[Callable[[str], Any]] = None,
                  cwd: Optional[str] = None, envs: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
                  stdin: Union[str, bytes, None] = None, background: bool = False, session: Optional[str] = None,
                  durability: Optional[str] = None, commands: Optional[str] = None):
        body = core.exec_body(cmd, cwd, envs, timeout, stdin, session, durability, commands)
        t = self._sb._t
        if background:
            p = await t.json(core.request("start_process", id=self._sb.id, json_body=body))
            return AsyncCommandHandle(self._sb, p["pid"])
        return await t.stream(core.request("exec", id=self._sb.id, json_body=body), core.EventReader(on_stdout, on_stderr))

    async def list(self) -> List[Dict[str, Any]]:
        return await self._sb._t.json(core.request("list_processes", id=self._sb.id))

    def connect(self, pid: int) -> AsyncCommandHandle:
        return AsyncCommandHandle(self._sb, pid)


class AsyncWatchHandle:
    """A live watch: ``async for ev in handle`` (it ends after the closed
    event); aclose() stops it. Made by ``await sb.files.watch(path)``."""

    async def _open(self, t: "_AsyncTransport", req: Request) -> "AsyncWatchHandle":
        self._closed = False
        self._cm = t.http.stream(req.method, req.path, params=req.params or None, timeout=httpx.Timeout(None, connect=10.0))
        try:
            resp = await self._cm.__aenter__()
        except httpx.TransportError as e:
            raise core.UnavailableError(f"cannot reach warren at {t.url}: {e}") from e
        if resp.status_code >= 400:
            await resp.aread()
            await self._cm.__aexit__(None, None, None)
            raise core.error_for(resp.status_code, resp.content, resp.headers.get("Retry-After"))
        self._lines = resp.aiter_lines()
        async for line in self._lines:
            ev = core.watch_event(line)
            if ev is not None and ev.type == "ready":
                break
        return self

    async def __aiter__(self):
        try:
            async for line in self._lines:
                ev = core.watch_event(line)
                if ev is None:
                    continue
                yield ev
                if ev.type == "closed":
                    return
        except httpx.TransportError as e:
            raise core.UnavailableError(f"watch stream lost: {e}") from e
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._cm.__aexit__(None, None, None)


class AsyncFiles:
    def __init__(self, sandbox: "AsyncSandbox"):
        self._sb = sandbox

    async def watch(self, path: str, recursive: bool = False) -> AsyncWatchHandle:
        req = core.request("watch_files", id=self._sb.id, params=core.watch_params(path, recursive))
        return await AsyncWatchHandle()._open(self._sb._t, req)

    async def read(self, path: str, format: str = "text", offset: int = 0, length: int = 0) -> Union[str, bytes]:
        core.check_format(format)
        resp = await self._sb._t.send(core.request("get_files", id=self._sb.id, params=core.read_params(path, offset, length)))
        return resp.content if format == "bytes" else resp.content.decode("utf-8")

    async def write(self, path: str, data: Union[str, bytes], *, append: bool = False, mode: Optional[int] = None,
                    durability: Optional[str] = None) -> WriteInfo:
        resp = await self._sb._t.send(core.request("put_files", id=self._sb.id, params=core.write_params(path, append, mode, durability),
                                                   content=core.encode(data), headers={"Content-Type": "application/octet-stream"}))
        return core.write_info(path, resp.headers)

    async def list(self, path: str, depth: int = 0, recursive: bool = False) -> List[EntryInfo]:
        req = core.request("get_files", id=self._sb.id, params=core.list_params(path, depth, recursive))
        return [EntryInfo.of(d) for d in await self._sb._t.json(req)]

    async def stat(self, path: str) -> EntryInfo:
        return EntryInfo.of(await self._sb._t.json(core.request("get_files", id=self._sb.id, params={"path": path, "stat": "true"})))

    async def exists(self, path: str) -> bool:
        try:
            await self.stat(path)
            return True
        except core.NotFoundError:
            return False

    async def upload_tar(self, dir: str, data: bytes) -> None:
        await self._sb._t.send(core.request("put_files", id=self._sb.id, params={"path": dir, "format": "tar"}, content=data,
                                            headers={"Content-Type": "application/x-tar"}))

    async def download_tar(self, dir: str) -> bytes:
        return (await self._sb._t.send(core.request("get_files", id=self._sb.id, params={"path": dir, "format": "tar"}))).content

    async def remove(self, path: str, recursive: bool = False) -> None:
        params = {"path": path, "recursive": "true"} if recursive else {"path": path}
        await self._sb._t.send(core.request("delete_files", id=self._sb.id, params=params))

    async def rename(self, old: str, new: str) -> None:
        await self._sb._t.send(core.request("move", id=self._sb.id, json_body={"from": old, "to": new}))

    async def make_dir(self, path: str) -> None:
        await self._sb._t.send(core.request("mkdir", id=self._sb.id, json_body={"path": path}))


class AsyncNetwork:
    def __init__(self, sandbox: "AsyncSandbox"):
        self._sb = sandbox

    async def get(self) -> NetworkStatus:
        return NetworkStatus.of(await self._sb._t.json(core.request("get_network", id=self._sb.id)))

    async def set(self, allow: Optional[List[str]] = None, deny: Optional[List[str]] = None,
                  secrets: Optional[List[Union[Secret, Dict[str, Any]]]] = None) -> NetworkStatus:
        body = core.network_body(allow, deny, secrets)
        return NetworkStatus.of(await self._sb._t.json(core.request("set_network", id=self._sb.id, json_body=body)))

    async def audit(self) -> List[NetworkDecision]:
        return (await self.get()).audit


class AsyncSandbox:
    """await AsyncSandbox.create(...) / await AsyncSandbox.connect(id)."""

    def __init__(self, info: Dict[str, Any], transport: _AsyncTransport):
        self._t, self.info = transport, info
        self.id: str = info["id"]
        self.commands = AsyncCommands(self)
        self.files = AsyncFiles(self)
        self.pty = AsyncPty(self)
        self.network = AsyncNetwork(self)

    @classmethod
    async def create(cls, *, image: Optional[str] = None, snapshot: Optional[str] = None, envs: Optional[Dict[str, str]] = None,
                     cwd: Optional[str] = None, labels: Optional[Dict[str, str]] = None, limits: Optional[Dict[str, Any]] = None,
                     ttl: Optional[float] = None, network: Union[core.NetworkPolicy, Dict[str, List[str]], None] = None,
                     secrets: Optional[List[Union[Secret, Dict[str, Any]]]] = None, durability: Optional[str] = None,
                     from_generation: Union[Generation, tuple, Dict[str, Any], None] = None,
                     retention: Union[Retention, Dict[str, Any], None] = None, standby_after: Optional[float] = None, standby_with_jobs: bool = False,
                     user: Optional[str] = None, hostname: Optional[str] = None, security: Optional[str] = None,
                     commands: Optional[str] = None, node_selector: Optional[Dict[str, str]] = None,
                     volumes: Optional[List[Union[VolumeMount, Dict[str, Any], str]]] = None,
                     drives: Optional[List[Union[DriveMount, Dict[str, Any], str]]] = None,
                     api_url: Optional[str] = None, api_key: Optional[str] = None) -> "AsyncSandbox":
        t = _AsyncTransport(api_url, api_key)
        body = core.create_body(image, snapshot, envs, cwd, labels, limits, ttl, user=user, hostname=hostname,
                                standby_after=standby_after, standby_with_jobs=standby_with_jobs, durability=durability, security=security, commands=commands,
                                node_selector=node_selector, network=network, secrets=secrets,
                                from_generation=from_generation, retention=retention, volumes=volumes, drives=drives)
        return cls(await t.json(core.request("create", json_body=body)), t)

    @classmethod
    async def connect(cls, sandbox_id: str, *, api_url: Optional[str] = None, api_key: Optional[str] = None) -> "AsyncSandbox":
        t = _AsyncTransport(api_url, api_key)
        return cls(await t.json(core.request("get", id=sandbox_id)), t)

    @classmethod
    async def list(cls, *, labels: Optional[Dict[str, str]] = None, api_url: Optional[str] = None, api_key: Optional[str] = None) -> List["AsyncSandbox"]:
        t = _AsyncTransport(api_url, api_key)
        return [cls(d, t) for d in await t.json(core.request("list", params=core.label_params(labels)))]

    async def hibernate(self) -> None:
        self.info = await self._t.json(core.request("hibernate", id=self.id))

    async def resume(self) -> None:
        self.info = await self._t.json(core.request("resume", id=self.id))

    async def fork(self, count: int = 1, labels: Optional[Dict[str, str]] = None) -> List["AsyncSandbox"]:
        body: Dict[str, Any] = {"count": count}
        if labels:
            body["labels"] = dict(labels)
        res = await self._t.json(core.request("fork", id=self.id, json_body=body))
        return [AsyncSandbox(d, self._t) for d in res["sandboxes"]]

    async def snapshot(self, name: str) -> Dict[str, Any]:
        return await self._t.json(core.request("create_snapshot", id=self.id, json_body={"name": name}))

    async def generations(self) -> List[Generation]:
        return [Generation.of(self.id, d) for d in await self._t.json(core.request("list_generations", id=self.id))]

    async def refresh(self) -> Dict[str, Any]:
        self.info = await self._t.json(core.request("get", id=self.id))
        return self.info

    async def mount(self, drive: str, path: str, read_only: bool = False) -> List[DriveMount]:
        """Mount a shared drive at path (now if running, at resume in standby); the mount list."""
        body = DriveMount(drive, path, read_only).wire()
        return [DriveMount.of(d) for d in await self._t.json(core.request("mount_drive", id=self.id, json_body=body))]

    async def unmount(self, path: str) -> List[DriveMount]:
        """Unmount the drive at path (files still open there lose what they had not closed)."""
        return [DriveMount.of(d) for d in await self._t.json(core.request("unmount_drive", id=self.id, params={"path": path}))]

    async def mounts(self) -> List[DriveMount]:
        return [DriveMount.of(d) for d in await self._t.json(core.request("list_mounts", id=self.id))]

    async def kill(self) -> None:
        await self._t.send(core.request("delete", id=self.id))

    async def close(self) -> None:
        await self._t.http.aclose()

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


class AsyncClient:
    """Tenant-wide calls that are not about one sandbox (awaitable)."""

    def __init__(self, *, api_url: Optional[str] = None, api_key: Optional[str] = None):
        self._t = _AsyncTransport(api_url, api_key)

    async def health(self) -> bool:
        return (await self._t.json(core.request("health"))).get("status") == "ok"

    async def create_key(self, tenant: str) -> str:
        return (await self._t.json(core.request("create_key", json_body={"tenant": tenant})))["key"]

    async def list_snapshots(self) -> List[Dict[str, Any]]:
        return await self._t.json(core.request("list_snapshots"))

    async def get_snapshot(self, name: str) -> Dict[str, Any]:
        return await self._t.json(core.request("get_snapshot", name=name))

    async def delete_snapshot(self, name: str) -> None:
        await self._t.send(core.request("delete_snapshot", name=name))

    async def list_images(self) -> List[Dict[str, Any]]:
        return await self._t.json(core.request("list_images"))

    async def build_image(self, name: str, tar: bytes) -> Dict[str, Any]:
        return await self._t.json(core.request("build_image", params={"name": name}, content=tar, headers={"Content-Type": "application/x-tar"}))

    async def delete_image(self, name: str) -> None:
        await self._t.send(core.request("delete_image", name=name))

    async def create_volume(self, name: str, size: Union[int, str]) -> Volume:
        """A volume of size bytes (an int, or "10G"-style binary units)."""
        return Volume.of(await self._t.json(core.request("create_volume", json_body={"name": name, "size": core.size_bytes(size)})))

    async def list_volumes(self) -> List[Volume]:
        return [Volume.of(d) for d in await self._t.json(core.request("list_volumes"))]

    async def get_volume(self, name: str) -> Volume:
        return Volume.of(await self._t.json(core.request("get_volume", name=name)))

    async def resize_volume(self, name: str, size: Union[int, str]) -> Volume:
        """Grow a volume (a smaller size is refused: InvalidArgumentError)."""
        return Volume.of(await self._t.json(core.request("resize_volume", name=name, json_body={"size": core.size_bytes(size)})))

    async def delete_volume(self, name: str) -> None:
        """Delete a volume and its data (refused while a sandbox holds it: ConflictError)."""
        await self._t.send(core.request("delete_volume", name=name))

    async def create_drive(self, name: str, size: Union[int, str, None] = None) -> Drive:
        """A shared drive, with a quota of size bytes (an int or "10G"; None: no quota)."""
        body: Dict[str, Any] = {"name": name}
        if size is not None:
            body["size"] = core.size_bytes(size)
        return Drive.of(await self._t.json(core.request("create_drive", json_body=body)))

    async def list_drives(self) -> List[Drive]:
        return [Drive.of(d) for d in await self._t.json(core.request("list_drives"))]

    async def get_drive(self, name: str) -> Drive:
        return Drive.of(await self._t.json(core.request("get_drive", name=name)))

    async def delete_drive(self, name: str) -> None:
        """Delete a drive and its files (refused while mounted: ConflictError)."""
        await self._t.send(core.request("delete_drive", name=name))

    async def close(self) -> None:
        await self._t.http.aclose()
