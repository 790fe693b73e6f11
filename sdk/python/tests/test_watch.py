import pytest

import warren
from warren import AsyncSandbox, Sandbox, WatchEvent


def test_watch_sync(tenant):
    sb = Sandbox.create()
    sb.files.make_dir("/w")
    with pytest.raises(warren.NotFoundError):
        sb.files.watch("/missing")
    sb.files.write("/w/f", "x")
    with pytest.raises(warren.InvalidArgumentError):
        sb.files.watch("/w/f")
    w = sb.files.watch("/w")
    events = iter(w)
    sb.files.write("/w/a", "hi")
    assert next(events) == WatchEvent("create", "a", file_type="file")
    sb.commands.run("echo more >> /w/a")
    assert next(events) == WatchEvent("write", "a", file_type="file")
    sb.commands.run("mv /w/a /w/b")
    assert next(events) == WatchEvent("rename", "b", old_name="a", file_type="file")
    sb.files.remove("/w/b")
    assert next(events) == WatchEvent("remove", "b")
    sb.hibernate()
    assert next(events) == WatchEvent("closed", reason="hibernated")
    with pytest.raises(StopIteration):
        next(events)


@pytest.mark.asyncio
async def test_watch_async(tenant):
    sb = await AsyncSandbox.create()
    await sb.files.make_dir("/d")
    w = await sb.files.watch("/", recursive=True)
    await sb.files.write("/d/x", "1")
    got = []
    async for ev in w:
        got.append(ev)
        if ev.name == "d/x":
            break
    assert got[-1] == WatchEvent("create", "d/x", file_type="file")
    await w.aclose()
    await sb.close()
