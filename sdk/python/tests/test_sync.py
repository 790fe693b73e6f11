import json
import threading
import time
import urllib.request

import pytest

import warren
from warren import Sandbox


def test_run_result_and_env_fallback(tenant):
    sb = Sandbox.create(labels={"sdk": "py"})  # from $WARREN_SERVER/$WARREN_API_KEY
    r = sb.commands.run("echo out; echo err >&2; exit 3")
    assert (r.exit_code, r.stdout, r.stderr) == (3, "out\n", "err\n")
    r = sb.commands.run("cat; echo $K; pwd", stdin="in\n", envs={"K": "v"}, cwd="/tmp")
    assert r.stdout == "in\nv\n/tmp\n" and r.exit_code == 0
    sb.commands.run("X=5; cd /etc")
    assert sb.commands.run("echo $X; pwd").stdout == "5\n/etc\n"
    ids = [s.id for s in Sandbox.list(labels={"sdk": "py"})]
    assert ids == [sb.id]
    sb.kill()
    with pytest.raises(warren.NotFoundError):
        Sandbox.connect(sb.id)


def test_streaming_callbacks_and_timeout(tenant):
    sb = Sandbox.create()
    seen = []
    r = sb.commands.run("for i in 1 2 3; do echo $i; done", on_stdout=seen.append)
    assert "".join(seen) == "1\n2\n3\n" == r.stdout
    r = sb.commands.run("sleep 5", timeout=0.3)
    assert r.exit_code != 0 and r.limit == "timeout"


def test_non_utf8_output(tenant):
    sb = Sandbox.create()
    r = sb.commands.run(r"printf 'a\377b'")
    assert r.stdout_bytes == b"a\xffb"
    assert r.stdout == "a\ufffdb"


def test_abort_stream_cancels_exec(tenant):
    sb = Sandbox.create()

    def stop(_):
        raise KeyboardInterrupt  # what a user's ^C looks like

    with pytest.raises(KeyboardInterrupt):
        sb.commands.run("echo started; sleep 1.5; touch /tmp/finished", on_stdout=stop)
    time.sleep(2.5)
    assert not sb.files.exists("/tmp/finished"), "the exec went on after its stream was aborted"


def test_files_binary_safe(tenant):
    sb = Sandbox.create()
    data = bytes(range(256)) * 4
    sb.files.write("/w/bin", data)
    assert sb.files.read("/w/bin", format="bytes") == data
    assert sb.files.read("/w/bin", format="bytes", offset=250, length=10) == data[250:260]
    sb.files.write("/w/t.txt", "héllo\n")
    sb.files.write("/w/t.txt", "more\n", append=True)
    assert sb.files.read("/w/t.txt") == "héllo\nmore\n"
    sb.files.make_dir("/w/d/e")
    sb.files.rename("/w/t.txt", "/w/d/e/u.txt")
    names = sorted(e.path for e in sb.files.list("/w", recursive=True))
    assert "/w/d/e/u.txt" in names and "/w/t.txt" not in names
    assert sb.files.stat("/w/bin").size == 1024
    sb.files.remove("/w/d", recursive=True)
    assert not sb.files.exists("/w/d/e/u.txt")
    with pytest.raises(warren.NotFoundError):
        sb.files.read("/nope")
    with pytest.raises(warren.InvalidArgumentError):
        sb.files.read("/w/bin", format="yaml")


def test_background_process(tenant):
    sb = Sandbox.create()
    h = sb.commands.run("while read l; do echo got $l; done; exit 4", background=True)
    assert h.pid > 0
    h.send_stdin("a\n")
    h.send_stdin("b\n", close=True)
    r = h.wait()
    assert r.exit_code == 4 and r.stdout == "got a\ngot b\n"
    h2 = sb.commands.run("sleep 100", background=True)
    h2.kill()
    assert h2.wait().exit_code != 0


def test_shell_jobs_are_processes(tenant):
    # A job started with & outlives its exec and is listed with its %N and $!.
    sb = Sandbox.create(standby_with_jobs=True)
    shell_pid = int(sb.commands.run("sleep 100 & echo $!").stdout)
    jobs = [p for p in sb.commands.list() if p.get("job")]
    assert [(p["job"], p["shell_pid"], p["running"]) for p in jobs] == [(1, shell_pid, True)]
    assert sb.commands.run("jobs").stdout.startswith("[1]+  Running")
    sb.commands.run("kill %1")


def test_lifecycle(tenant):
    sb = Sandbox.create()
    sb.commands.run("echo kept > /k; V=1")
    sb.hibernate()
    assert sb.info["state"] == "standby"
    assert sb.commands.run("cat /k; echo $V").stdout == "kept\n1\n"
    kids = sb.fork(count=2)
    assert len(kids) == 2 and all(k.info["parent"] == sb.id for k in kids)
    kids[0].files.write("/k", "changed\n")
    assert sb.files.read("/k") == "kept\n"
    snap = sb.snapshot("s1")
    assert snap["name"] == "s1"
    again = Sandbox.create(snapshot="s1")
    assert again.files.read("/k") == "kept\n"
    with pytest.raises(warren.ConflictError):
        sb.snapshot("s1")


def test_errors_are_typed(tenant, server):
    with pytest.raises(warren.AuthenticationError) as e:
        Sandbox.create(api_key="not-a-key")
    assert "unknown API key" in str(e.value)
    with pytest.raises(warren.UnavailableError):
        Sandbox.create(api_url="http://127.0.0.1:9")  # nothing listens on port 9
    with pytest.raises(warren.InvalidArgumentError):
        Sandbox.create(limits={"timeout": "forever"})


def test_images(tenant):
    c = warren.Client()
    names = [i["name"] for i in c.list_images()]
    assert names, "no images listed"
    with pytest.raises(warren.NotFoundError):
        c.delete_image("no-such-image")
    c.close()


def test_every_openapi_operation_is_covered(server):
    with urllib.request.urlopen(server["url"] + "/v1/openapi.json") as resp:
        doc = json.load(resp)
    served = {f"{m.upper()} {p}" for p, ops in doc["paths"].items() for m in ops if m != "parameters"}
    covered = {f"{m} {p}" for m, p in warren.OPERATIONS.values()}
    missing = served - covered - set(warren.ABSENT)
    assert not missing, f"OpenAPI operations the Python SDK neither covers nor lists in ABSENT: {sorted(missing)}"
    stale = (covered | set(warren.ABSENT)) - served
    assert not stale, f"the SDK names operations the server no longer serves: {sorted(stale)}"


def test_every_operation_has_a_method():
    # OPERATIONS is what the SDK claims to cover: each one must be called
    # by the sync and the async client, or the openapi test above means little.
    import inspect
    from warren import _async, _sync
    for name, mod in (("sync", _sync), ("async", _async)):
        src = inspect.getsource(mod)
        unused = [op for op in warren.OPERATIONS if f'"{op}"' not in src]
        assert not unused, f"operations the {name} client never calls: {unused}"


def test_create_and_run_options(tenant):
    sb = Sandbox.create(user="root", hostname="box", commands="resident-only", security="relaxed", standby_after=30)
    assert (sb.info["user"], sb.info["hostname"], sb.info["commands"], sb.info["security"], sb.info["standby_after"]) == \
        ("root", "box", "resident-only", "relaxed", "30s")
    r = sb.commands.run("id -un; hostname; git apply --3way x")
    assert r.stdout == "root\nbox\n" and r.exit_code == 2
    assert "(commands policy resident-only)" in r.stderr
    assert r.rungs == {"resident": 2, "missing": 1} and r.cpu_seconds == 0
    # A run's own policy naming a mode replaces the sandbox's.
    r = sb.commands.run("git apply --3way x", commands="resident-first")
    assert r.exit_code == 2 and "resident-only" not in r.stderr, r.stderr
    kids = sb.fork(count=1, labels={"kid": "1"})
    assert kids[0].info["labels"] == {"kid": "1"}
    with pytest.raises(warren.InvalidArgumentError) as e:
        Sandbox.create(security="none")
    assert "none" in str(e.value)
