// Egress through a real `warren serve` to loopback upstreams this test
// runs (--egress-hosts maps the test names to 127.0.0.1).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Sandbox, InvalidArgumentError, NotFoundError } from "../dist/index.js";
import { startEgressServer, startUpstream, makeCert, need, ALLOWED, DENIED, SECRET_HOST } from "./server.mjs";

let srv, conn, plain, tls;
before(async () => {
  const cert = makeCert();
  plain = await startUpstream();
  if (cert) tls = await startUpstream({ cert: cert.cert, key: cert.key });
  srv = await startEgressServer(cert?.certFile);
  conn = { apiUrl: srv.url, apiKey: await srv.tenantKey() };
});
after(async () => {
  await srv?.stop();
  plain?.close();
  tls?.close();
});

const curl = (sb, host, port, { scheme = "http", header } = {}) =>
  sb.commands.run(`curl -sS${header ? ` -H "${header}"` : ""} ${scheme}://${host}:${port}/p`);

test("policy: allowed 200, denied exit 7, an update applies to the next exec, the audit has both", async () => {
  const sb = await Sandbox.create({ ...conn, network: { allow: [ALLOWED] } });
  assert.deepEqual(sb.info.network, { allow: [ALLOWED] });
  const deniedBefore = plain.hits[DENIED] ?? 0;
  let r = await curl(sb, ALLOWED, plain.port);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).host, ALLOWED);
  r = await sb.commands.run(`curl -s -o /dev/null -w '%{http_code}' http://${ALLOWED}:${plain.port}/`);
  assert.equal(r.stdout, "200");
  r = await curl(sb, DENIED, plain.port);
  assert.equal(r.exitCode, 7, r.stderr);
  assert.match(r.stderr, /blocked by the egress policy/);
  assert.equal(plain.hits[DENIED] ?? 0, deniedBefore, "a denied request reached the upstream");

  let st = await sb.network.get();
  assert.deepEqual(st.policy, { allow: [ALLOWED], deny: [] });
  assert.equal(st.decisions, 3);
  assert.deepEqual(st.audit.map((d) => [d.host, d.port, d.allowed]), [[ALLOWED, plain.port, true], [ALLOWED, plain.port, true], [DENIED, plain.port, false]]);
  assert.equal(st.audit[0].addr, "127.0.0.1");
  assert.match(st.audit[2].reason, /allow list/);

  st = await sb.network.set({ allow: [DENIED], deny: [ALLOWED] });
  assert.deepEqual(st.policy, { allow: [DENIED], deny: [ALLOWED] });
  assert.equal((await curl(sb, DENIED, plain.port)).exitCode, 0);
  assert.equal((await curl(sb, ALLOWED, plain.port)).exitCode, 7);
  const audit = await sb.network.audit();
  assert.deepEqual(audit.slice(-2).map((d) => [d.host, d.allowed]), [[DENIED, true], [ALLOWED, false]]);
  assert.deepEqual((await sb.refresh()).network, { allow: [DENIED], deny: [ALLOWED] });

  assert.deepEqual((await sb.network.set()).policy, { allow: [], deny: [] });
  assert.equal((await curl(sb, DENIED, plain.port)).exitCode, 7);
});

test("no network unless a policy allows it", async () => {
  const sb = await Sandbox.create(conn);
  assert.equal(sb.info.network, undefined);
  assert.equal((await curl(sb, ALLOWED, plain.port)).exitCode, 7);
});

test("secrets: the sandbox and the API see only the placeholder; TLS to the secret's host gets the value", async (t) => {
  const value = "s3cr3t-value-the-sandbox-never-sees";
  const sb = await Sandbox.create({ ...conn, network: { allow: [SECRET_HOST, ALLOWED] }, secrets: [{ name: "API_TOKEN", value, hosts: [SECRET_HOST] }] });
  const placeholder = sb.info.env.API_TOKEN;
  assert.match(placeholder, /^warren-secret-API_TOKEN-/);
  assert.equal((await sb.commands.run('printenv API_TOKEN; echo "$API_TOKEN"')).stdout, `${placeholder}\n${placeholder}\n`);
  const st = await sb.network.get();
  assert.deepEqual(st.secrets, [{ name: "API_TOKEN", placeholder, hosts: [SECRET_HOST] }]);
  for (const answer of [sb.info, await sb.refresh(), (await Sandbox.list(conn)).map((s) => s.info), st]) {
    assert.ok(!JSON.stringify(answer).includes(value), "an API answer carries the secret's value");
  }
  for (const host of [SECRET_HOST, ALLOWED]) {
    const r = await curl(sb, host, plain.port, { header: "Authorization: Bearer $API_TOKEN" });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).authorization, `Bearer ${placeholder}`, `plain HTTP to ${host}`);
  }
  if (!tls) return need(t, "openssl", "the HTTPS upstream that receives the secret's value needs a certificate");
  let r = await curl(sb, SECRET_HOST, tls.port, { scheme: "https", header: "Authorization: Bearer $API_TOKEN" });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).authorization, `Bearer ${value}`);
  const up = await sb.network.set({ allow: [SECRET_HOST], secrets: [{ name: "API_TOKEN", value: "v2", hosts: [SECRET_HOST] }] });
  assert.deepEqual(up.secrets.map((s) => s.name), ["API_TOKEN"]);
  r = await curl(sb, SECRET_HOST, tls.port, { scheme: "https", header: "Authorization: Bearer $API_TOKEN" });
  assert.equal(JSON.parse(r.stdout).authorization, "Bearer v2");
  // No secrets in the update: they stay.
  assert.deepEqual((await sb.network.set({ allow: [SECRET_HOST] })).secrets.map((s) => s.name), ["API_TOKEN"]);
});

test("an empty secrets list removes them", async () => {
  const sb = await Sandbox.create({ ...conn, network: { allow: [SECRET_HOST] }, secrets: [{ name: "T", value: "v", hosts: [SECRET_HOST] }] });
  assert.deepEqual((await sb.network.set({ allow: [SECRET_HOST], secrets: [] })).secrets, []);
});

test("network: bad input is named", async () => {
  const sb = await Sandbox.create(conn);
  await assert.rejects(sb.network.set({ allow: ["exa mple.com"] }), (e) => e instanceof InvalidArgumentError && e.message.includes("exa mple.com"));
  await assert.rejects(Sandbox.create({ ...conn, network: { allow: [ALLOWED], allowOut: ["x"] } }), InvalidArgumentError);
  await assert.rejects(Sandbox.create({ ...conn, secrets: [{ name: "T", value: "value-in-no-message", hosts: [] }] }),
    (e) => e instanceof InvalidArgumentError && /host/.test(e.message) && !e.message.includes("value-in-no-message"));
  await sb.kill();
  await assert.rejects(sb.network.get(), NotFoundError);
});
