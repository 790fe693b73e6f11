"""Volumes and drives through the SDK against a real `warren serve` (its default
worker processes): data outlives the sandbox, one read-write holder, grow
only, the quota, and the async client's same surface."""

import asyncio

import pytest

import warren
from warren import AsyncClient, AsyncSandbox, Client, Sandbox, Volume, VolumeMount


def test_volume_lifecycle(tenant):
    c = Client()
    v = c.create_volume("data", "1M")
    assert isinstance(v, Volume) and (v.name, v.size, v.attached_to) == ("data", 1 << 20, "")
    sb = Sandbox.create(volumes=["data:/data"])
    assert sb.commands.run("echo kept > /data/f && df /data").exit_code == 0
    assert c.get_volume("data").attached_to == sb.id
    with pytest.raises(warren.ConflictError) as e:
        Sandbox.create(volumes=[VolumeMount("data", "/d")])
    assert sb.id in str(e.value)
    with pytest.raises(warren.ConflictError):
        c.delete_volume("data")
    # Past the quota: ENOSPC in the shell, the volume's name in the message.
    r = sb.commands.run("head -c 2000000 /dev/zero > /data/big")
    assert r.exit_code != 0 and "No space left on device" in r.stderr, r.stderr
    sb.kill()

    ro = Sandbox.create(volumes=[{"name": "data", "path": "/in", "read_only": True}])
    r = ro.commands.run("cat /in/f; echo x > /in/g")
    assert r.stdout == "kept\n" and "Read-only file system" in r.stderr, (r.stdout, r.stderr)
    assert ro.id in c.get_volume("data").readers
    ro.kill()

    with pytest.raises(warren.InvalidArgumentError):
        c.resize_volume("data", "512K")
    assert c.resize_volume("data", "2M").size == 2 << 20
    assert [x.name for x in c.list_volumes()] == ["data"]
    c.delete_volume("data")
    with pytest.raises(warren.NotFoundError):
        c.get_volume("data")


@pytest.mark.parametrize("bad", ["data", "data:rel", "data:/x:rw:extra", ":/x", 7])
def test_volume_mount_refused_locally(tenant, bad):
    with pytest.raises((ValueError, TypeError)):
        Sandbox.create(volumes=[bad])


@pytest.mark.parametrize("bad", ["ten", "-1", 0, True, 1.5])
def test_volume_size_refused_locally(tenant, bad):
    with pytest.raises((ValueError, TypeError)):
        Client().create_volume("v", bad)


def test_async_volumes(tenant):
    async def main():
        c = AsyncClient()
        await c.create_volume("av", 1 << 20)
        sb = await AsyncSandbox.create(volumes=["av:/v"])
        assert (await sb.commands.run("echo a > /v/a")).exit_code == 0
        await sb.kill()
        again = await AsyncSandbox.create(volumes=["av:/v"])
        assert (await again.commands.run("cat /v/a")).stdout == "a\n"
        await again.kill()
        assert [v.name for v in await c.list_volumes()] == ["av"]
        await c.delete_volume("av")
        await c.close()
    asyncio.run(main())


def test_drive_shared_between_sandboxes(tenant):
    c = Client()
    d = c.create_drive("team", "1M")
    assert (d.name, d.size) == ("team", 1 << 20)
    a = Sandbox.create(drives=["team:/team"])
    b = Sandbox.create()
    assert [m.path for m in b.mount("team", "/mnt/t")] == ["/mnt/t"]
    assert a.commands.run("echo hello > /team/f").exit_code == 0
    assert b.commands.run("cat /mnt/t/f").stdout == "hello\n"
    assert [(m.drive, m.path, m.read_only) for m in a.mounts()] == [("team", "/team", False)]
    with pytest.raises(warren.ConflictError):
        c.delete_drive("team")
    with pytest.raises(warren.NotFoundError):
        b.mount("nosuch", "/x")
    assert b.unmount("/mnt/t") == []
    a.kill()
    b.kill()
    assert [x.name for x in c.list_drives()] == ["team"]
    c.delete_drive("team")
    with pytest.raises(warren.NotFoundError):
        c.get_drive("team")


def test_async_drive(tenant):
    async def main():
        c = AsyncClient()
        await c.create_drive("ad")
        sb = await AsyncSandbox.create()
        await sb.mount("ad", "/ad")
        assert (await sb.commands.run("echo x > /ad/x; cat /ad/x")).stdout == "x\n"
        assert [m.path for m in await sb.mounts()] == ["/ad"]
        await sb.unmount("/ad")
        await sb.kill()
        await c.delete_drive("ad")
        await c.close()
    asyncio.run(main())
