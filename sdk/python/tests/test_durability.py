"""Durability levels, generations, retention and the errors that come with
them, against a real `warren serve`."""

import time

import pytest

import warren
from warren import AsyncSandbox, Generation, Retention, Sandbox, WriteInfo


def test_levels_on_exec_and_write(tenant):
    sb = Sandbox.create()
    r = sb.commands.run("echo 1 > /tmp/g", durability="committed")
    assert r.exit_code == 0 and r.durability == "committed" and r.generation >= 1
    first = r.generation
    r = sb.commands.run("echo 2 > /tmp/g", durability="committed")
    assert r.generation > first
    assert sb.commands.run("echo 3 >> /tmp/g", durability="memory").durability == "memory"
    r = sb.commands.run("echo 4 >> /tmp/g")
    assert (r.durability, r.generation) == ("local", 0)  # the server's default
    w = sb.files.write("/tmp/f", b"x", durability="committed")
    assert w.durability == "committed" and w.generation > first and w.path == "/tmp/f"
    assert sb.files.write("/tmp/f", "y", durability="memory") == WriteInfo("/tmp/f", "memory", 0)
    assert sb.files.write("/tmp/f", "z").durability == "local"
    with pytest.raises(warren.InvalidArgumentError):
        sb.commands.run("true", durability="disk")
    with pytest.raises(warren.InvalidArgumentError):
        sb.files.write("/tmp/f", "z", durability="fsync")


def test_background_durability(tenant):
    sb = Sandbox.create()
    h = sb.commands.run("echo out; echo f > /f; exit 3", background=True, durability="committed")
    r = h.wait_exit()
    assert (r.exit_code, r.durability, r.stdout) == (3, "committed", "")
    assert r.generation >= 1
    streamed = h.wait()
    assert (streamed.exit_code, streamed.stdout, streamed.durability, streamed.generation) == (3, "out\n", "committed", r.generation)
    info = h.info()
    assert info["running"] is False and info["result"]["generation"] == r.generation


def test_sandbox_default_durability(tenant):
    sb = Sandbox.create(durability="committed")
    assert sb.info["durability"] == "committed"
    r = sb.commands.run("echo a > /a")
    assert r.durability == "committed" and r.generation >= 1
    assert sb.files.write("/b", "b").durability == "committed"
    with pytest.raises(warren.InvalidArgumentError) as e:
        Sandbox.create(durability="sometimes")
    assert "sometimes" in str(e.value)


def settled(sb, done, what):
    """sb's generations once done(numbers) holds: retention runs after a
    commit is acknowledged, so a list read at once may still hold a
    generation it is about to forget."""
    deadline = time.time() + 10
    while True:
        gens = sb.generations()
        if done([g.number for g in gens]):
            return gens
        if time.time() > deadline:
            pytest.fail(f"{what}: generations {[g.number for g in gens]} after 10 s")
        time.sleep(0.05)


def test_generations_and_from_generation(tenant):
    sb = Sandbox.create(retention=Retention(keep_last=3, keep_for=-1))
    gens = []
    for i in range(5):
        gens.append(sb.commands.run(f"echo {i} > /v", durability="committed").generation)
    listed = settled(sb, lambda nums: len(nums) <= 3, "keep_last 3")
    # keep_last 3, none kept by age: the last three, the newest the head.
    assert [g.number for g in listed] == gens[-3:]
    assert [g.head for g in listed] == [False, False, True]
    assert all(isinstance(g, Generation) and g.sandbox == sb.id and g.epoch >= 1 and g.created_at for g in listed)

    old = listed[0]
    kid = Sandbox.create(from_generation=old)
    assert kid.files.read("/v") == "2\n"
    assert Sandbox.create(from_generation=(sb.id, listed[1].number)).files.read("/v") == "3\n"
    assert sb.files.read("/v") == "4\n"
    # The new sandbox pins its generation past the retention.
    for i in range(3):
        sb.commands.run(f"echo {5 + i} > /v", durability="committed")
    # An unpinned generation past keep_last goes; the pinned one stays.
    by_number = {g.number: g for g in settled(sb, lambda nums: listed[2].number not in nums, "retention past keep_last")}
    assert old.number in by_number and f"sandbox:{kid.id}" in by_number[old.number].pinned_by
    assert len(by_number) == 5, sorted(by_number)  # the last three and the two pinned

    with pytest.raises(warren.NotFoundError) as e:
        Sandbox.create(from_generation=(sb.id, 999))
    assert "999" in str(e.value)
    with pytest.raises(warren.InvalidArgumentError):
        Sandbox.create(retention={"keep_last": -1})
    with pytest.raises(warren.InvalidArgumentError):
        Sandbox.create(from_generation="sb-x:1")


def test_snapshot_pins_its_generation(tenant):
    sb = Sandbox.create(retention=Retention(keep_last=1, keep_for=-1))
    sb.commands.run("echo pinned > /p", durability="committed")
    sb.hibernate()  # a snapshot of a standby sandbox is its head generation
    sb.snapshot("pin-me")
    head = [g for g in sb.generations() if g.head]
    assert len(head) == 1 and head[0].pinned_by == ["snapshot:pin-me"]
    for i in range(3):
        sb.commands.run(f"echo {i} > /p", durability="committed")
    kept = {g.number: g for g in sb.generations()}
    assert head[0].number in kept, "the snapshot's generation went with the retention"
    assert kept[head[0].number].pinned_by == ["snapshot:pin-me"]
    assert Sandbox.create(snapshot="pin-me").files.read("/p") == "pinned\n"
    assert Sandbox.create(from_generation=kept[head[0].number]).files.read("/p") == "pinned\n"


def test_write_budget_error(stallable):
    conn = {"api_url": stallable["url"], "api_key": stallable["key"]}
    sb = Sandbox.create(standby_after=-1, **conn)
    sb.files.write("/before", "b", durability="committed")
    stallable["pause"]()
    # In a script the budget is a failed write, not an API error.
    r = sb.commands.run("head -c 3000000 /dev/urandom > /big; echo $?", durability="memory")
    assert r.stdout == "1\n" and "write budget exhausted" in r.stderr, (r.stdout, r.stderr)
    # A file call over the budget: WriteBudgetError, with when to retry.
    with pytest.raises(warren.WriteBudgetError) as e:
        sb.files.write("/up", "up", durability="memory")
    err = e.value
    assert isinstance(err, warren.BudgetError) and err.status == 507 and err.code == "write_budget_exhausted"
    assert err.retry_after is not None and err.retry_after >= 1
    assert "write budget exhausted" in str(err)
    stallable["resume"]()
    r = sb.commands.run("rm -f /big", durability="committed")
    assert r.durability == "committed"
    assert sb.files.write("/up", "up").durability == "local"


def test_overloaded_error(shedding):
    with pytest.raises(warren.OverloadedError) as e:
        Sandbox.create(api_url=shedding["url"], api_key=shedding["key"])
    err = e.value
    assert isinstance(err, warren.UnavailableError) and err.status == 503 and err.code == "overloaded"
    assert err.retry_after is not None and err.retry_after >= 1
    assert "memory pressure" in str(err)


@pytest.mark.parametrize("status,code,message,cls", [
    (507, "write_budget_exhausted", "write budget exhausted (4 MiB uncommitted)", warren.WriteBudgetError),
    (507, "insufficient_storage", "disk quota", warren.BudgetError),
    (503, "overloaded", "shedding", warren.OverloadedError),
    (503, "unavailable", "worker restarting", warren.UnavailableError),
    (409, "failed_precondition", "sandbox sb-1: another node took it over; its writes here are refused: fenced: epoch 3", warren.FencedError),
    (409, "failed_precondition", "no write log on this node", warren.ConflictError),
    (409, "already_exists", "snapshot s1", warren.AlreadyExistsError),
    (501, "not_implemented", "not a fleet node", warren.UnsupportedError),
    (418, "", "teapot", warren.WarrenError),
])
def test_error_classes(status, code, message, cls):
    # The table the server's codes map through (api/errors.go's codes);
    # the tests above see the ones a single node can produce for real.
    import json
    from warren import _core
    err = _core.error_for(status, json.dumps({"error": {"code": code, "message": message}}).encode(), "2")
    assert type(err) is cls and err.code == code and err.status == status and err.retry_after == 2.0


@pytest.mark.asyncio
async def test_durability_async(tenant):
    sb = await AsyncSandbox.create(retention=Retention(keep_last=5))
    r = await sb.commands.run("echo x > /x", durability="committed")
    w = await sb.files.write("/y", "y", durability="committed")
    assert r.generation >= 1 and w.generation > r.generation
    gens = await sb.generations()
    assert gens[-1].number == w.generation and gens[-1].head
    kid = await AsyncSandbox.create(from_generation=gens[-1])
    assert await kid.files.read("/y") == "y"
    await sb.close()
