"""Egress through a real `warren serve` to the session's loopback upstreams
(conftest: --egress-hosts maps the test names to 127.0.0.1)."""

import json

import pytest

import warren
from conftest import ALLOWED, DENIED, SECRET_HOST, need
from warren import AsyncSandbox, NetworkPolicy, Sandbox, Secret


def curl(sb, host, port, scheme="http", header=None):
    h = f' -H "{header}"' if header else ""
    return sb.commands.run(f"curl -sS{h} {scheme}://{host}:{port}/p")


def test_policy_allow_deny_update_and_audit(tenant, upstream):
    port = upstream["http"].port
    sb = Sandbox.create(network={"allow": [ALLOWED]})
    assert sb.info["network"] == {"allow": [ALLOWED]}
    denied_before = upstream["http"].hits.get(DENIED, 0)

    r = curl(sb, ALLOWED, port)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["host"] == ALLOWED
    r = curl(sb, DENIED, port)
    assert r.exit_code == 7, (r.exit_code, r.stdout, r.stderr)
    assert "blocked by the egress policy" in r.stderr and DENIED in r.stderr
    assert upstream["http"].hits.get(DENIED, 0) == denied_before, "a denied request reached the upstream"

    st = sb.network.get()
    assert st.policy == NetworkPolicy(allow=[ALLOWED])
    assert st.decisions == 2
    assert [(d.host, d.port, d.allowed) for d in st.audit] == [(ALLOWED, port, True), (DENIED, port, False)]
    assert st.audit[0].addr == "127.0.0.1"
    assert "allow list" in st.audit[1].reason

    # A policy change applies to the next exec: the two hosts swap.
    st = sb.network.set(allow=[DENIED], deny=[ALLOWED])
    assert st.policy == NetworkPolicy(allow=[DENIED], deny=[ALLOWED])
    assert curl(sb, DENIED, port).exit_code == 0
    assert curl(sb, ALLOWED, port).exit_code == 7
    audit = sb.network.audit()
    assert [(d.host, d.allowed) for d in audit[-2:]] == [(DENIED, True), (ALLOWED, False)]
    assert sb.refresh()["network"] == {"allow": [DENIED], "deny": [ALLOWED]}

    # No allow list: nothing gets out.
    assert sb.network.set().policy == NetworkPolicy()
    assert curl(sb, DENIED, port).exit_code == 7


def test_no_network_by_default(tenant, upstream):
    sb = Sandbox.create()
    assert "network" not in sb.info
    assert curl(sb, ALLOWED, upstream["http"].port).exit_code == 7
    assert sb.network.get().policy == NetworkPolicy()


def test_secrets_placeholder_only(tenant, upstream):
    value = "s3cr3t-value-the-sandbox-never-sees"
    sb = Sandbox.create(network={"allow": [SECRET_HOST, ALLOWED]},
                        secrets=[Secret("API_TOKEN", value, hosts=[SECRET_HOST])])
    placeholder = sb.info["env"]["API_TOKEN"]
    assert placeholder.startswith("warren-secret-API_TOKEN-")
    # The sandbox sees only the placeholder.
    r = sb.commands.run('printenv API_TOKEN; echo "$API_TOKEN"')
    assert r.stdout == f"{placeholder}\n{placeholder}\n"
    st = sb.network.get()
    assert [(s.name, s.placeholder, s.hosts) for s in st.secrets] == [("API_TOKEN", placeholder, [SECRET_HOST])]
    # No API answer carries the value.
    for answer in (sb.info, sb.refresh(), [s.info for s in Sandbox.list()], st):
        assert value not in repr(answer)
    # Plain HTTP, even to the secret's host, and another host: the placeholder.
    for host in (SECRET_HOST, ALLOWED):
        r = curl(sb, host, upstream["http"].port, header="Authorization: Bearer $API_TOKEN")
        assert r.exit_code == 0, r.stderr
        assert json.loads(r.stdout)["authorization"] == f"Bearer {placeholder}"
    if upstream["https"] is None:
        need("openssl", "the HTTPS upstream that receives the secret's value needs a certificate")
    # Over TLS to the secret's host: the upstream gets the real value.
    r = curl(sb, SECRET_HOST, upstream["https"].port, scheme="https", header="Authorization: Bearer $API_TOKEN")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["authorization"] == f"Bearer {value}"

    # Replacing the secrets: the same placeholder now carries the new value.
    st = sb.network.set(allow=[SECRET_HOST], secrets=[{"name": "API_TOKEN", "value": "v2", "hosts": [SECRET_HOST]}])
    assert [s.name for s in st.secrets] == ["API_TOKEN"] and "v2" not in repr(st)
    r = curl(sb, SECRET_HOST, upstream["https"].port, scheme="https", header="Authorization: Bearer $API_TOKEN")
    assert json.loads(r.stdout)["authorization"] == "Bearer v2"
    # secrets=None keeps them.
    assert [s.name for s in sb.network.set(allow=[SECRET_HOST]).secrets] == ["API_TOKEN"]


def test_empty_secrets_list_removes_them(tenant):
    sb = Sandbox.create(network={"allow": [SECRET_HOST]}, secrets=[Secret("T", "v", [SECRET_HOST])])
    assert sb.network.set(allow=[SECRET_HOST], secrets=[]).secrets == []


def test_network_bad_input(tenant):
    sb = Sandbox.create()
    with pytest.raises(warren.InvalidArgumentError) as e:
        sb.network.set(allow=["exa mple.com"])
    assert "exa mple.com" in str(e.value)
    with pytest.raises(warren.InvalidArgumentError):
        Sandbox.create(network={"allow": [ALLOWED], "allow_out": ["x"]})
    with pytest.raises(warren.InvalidArgumentError) as e:
        Sandbox.create(secrets=[{"name": "T", "value": "value-in-no-message", "hosts": []}])
    assert "host" in str(e.value) and "value-in-no-message" not in str(e.value), str(e.value)
    with pytest.raises(warren.NotFoundError):
        Sandbox(dict(sb.info, id="sb-missing"), sb._t).network.get()


@pytest.mark.asyncio
async def test_network_async(tenant, upstream):
    sb = await AsyncSandbox.create(network=NetworkPolicy(allow=[ALLOWED]), secrets=[Secret("K", "kv", [SECRET_HOST])])
    assert sb.info["env"]["K"].startswith("warren-secret-K-")
    r = await sb.commands.run(f"curl -s -o /dev/null -w '%{{http_code}}' http://{ALLOWED}:{upstream['http'].port}/")
    assert r.stdout == "200"
    st = await sb.network.set(allow=[DENIED])
    assert st.policy.allow == [DENIED] and [s.name for s in st.secrets] == ["K"]
    r = await sb.commands.run(f"curl -s http://{ALLOWED}:{upstream['http'].port}/")
    assert r.exit_code == 7
    assert [d.allowed for d in await sb.network.audit()] == [True, False]
    await sb.kill()
    await sb.close()
