import asyncio

import pytest

import warren
from warren import AsyncSandbox


@pytest.mark.asyncio
async def test_async_surface(tenant):
    sb = await AsyncSandbox.create(labels={"sdk": "pyasync"})
    r = await sb.commands.run("echo hi; exit 2")
    assert (r.exit_code, r.stdout) == (2, "hi\n")
    seen = []
    r = await sb.commands.run("echo a; echo b >&2", on_stdout=seen.append, on_stderr=seen.append)
    assert sorted(seen) == ["a\n", "b\n"]
    data = bytes(range(256))
    await sb.files.write("/b", data)
    assert await sb.files.read("/b", format="bytes") == data
    await sb.files.make_dir("/d")
    await sb.files.rename("/b", "/d/b")
    assert [e.name for e in await sb.files.list("/d")] == ["b"]
    assert (await sb.files.stat("/d/b")).size == 256
    assert await sb.files.exists("/d/b") and not await sb.files.exists("/d/nope")
    tar = await sb.files.download_tar("/d")
    await sb.files.upload_tar("/copy", tar)
    assert await sb.files.read("/copy/b", format="bytes") == data
    h = await sb.commands.run("read x; echo got $x", background=True)
    assert [p["pid"] for p in await sb.commands.list()] == [h.pid]
    h = sb.commands.connect(h.pid)
    await h.send_stdin("z\n", close=True)
    assert (await h.wait()).stdout == "got z\n"
    await sb.hibernate()
    kids = await sb.fork()
    assert (await kids[0].files.read("/d/b", format="bytes")) == data
    assert {s.id for s in await AsyncSandbox.list(labels={"sdk": "pyasync"})} == {sb.id, kids[0].id}  # forks keep labels
    await sb.kill()
    with pytest.raises(warren.NotFoundError):
        await AsyncSandbox.connect(sb.id)
    await sb.close()


@pytest.mark.asyncio
async def test_async_concurrent_execs(tenant):
    sbs = await asyncio.gather(*[AsyncSandbox.create() for _ in range(4)])
    results = await asyncio.gather(*[sb.commands.run(f"echo {i}") for i, sb in enumerate(sbs)])
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(4)]


@pytest.mark.asyncio
async def test_async_client(tenant):
    c = warren.AsyncClient()
    assert await c.health()
    assert [i["name"] for i in await c.list_images()]
    sb = await AsyncSandbox.create()
    await sb.files.write("/s", "snap")
    await sb.snapshot("async-snap")
    assert [s["name"] for s in await c.list_snapshots()] == ["async-snap"]
    assert (await c.get_snapshot("async-snap"))["sandbox"] == sb.id
    await c.delete_snapshot("async-snap")
    with pytest.raises(warren.NotFoundError):
        await c.get_snapshot("async-snap")
    with pytest.raises(warren.NotFoundError):
        await c.delete_image("no-such-image")
    await c.close()
