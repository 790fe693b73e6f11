// Starts a real `warren serve` (built from this checkout, or $WARREN_BIN) on
// a loopback port with a temporary data directory, and the loopback
// upstreams and the S3 server the network and durability tests use.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, accessSync, constants } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join, dirname, delimiter } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { createServer as createHttp } from "node:http";
import { createServer as createHttps } from "node:https";
import { connect } from "node:net";
import { Client } from "../dist/index.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

// Names the main server's --egress-hosts maps to 127.0.0.1.
export const ALLOWED = "allowed.warren.test";
export const DENIED = "denied.warren.test";
export const SECRET_HOST = "secret.warren.test";

let built;
function binary() {
  if (process.env.WARREN_BIN) return process.env.WARREN_BIN;
  if (!built) {
    built = join(mkdtempSync(join(tmpdir(), "warren-tssdk-bin-")), "warren");
    execFileSync("go", ["build", "-o", built, "./cmd/warren"], { cwd: repo, stdio: "inherit" });
  }
  return built;
}

/** Where a program is on PATH (or in extra), or undefined. */
export function which(name, ...extra) {
  for (const d of [...(process.env.PATH ?? "").split(delimiter), ...extra]) {
    try {
      accessSync(join(d, name), constants.X_OK);
      return join(d, name);
    } catch {}
  }
  return undefined;
}

/** A part the tests need is missing: fail in CI, skip (with the reason) elsewhere. */
export function need(t, what, why) {
  const msg = `${what} is missing: ${why}`;
  if (process.env.CI) throw new Error(msg);
  t.skip(msg);
}

/** One `warren serve` process with extra flags: url, admin, tenantKey(), stop(). */
export async function startServer(flags = [], env = process.env) {
  const tmp = mkdtempSync(join(tmpdir(), "warren-tssdk-"));
  const data = join(tmp, "data");
  const proc = spawn(binary(), ["serve", "--addr", "127.0.0.1:0", "--data", data, "--no-native", ...flags], { stdio: ["ignore", "pipe", "ignore"], env });
  const rl = createInterface({ input: proc.stdout });
  const url = await new Promise((resolve, reject) => {
    let u;
    const timer = setTimeout(() => reject(new Error("warren serve did not start in 60 s")), 60000);
    rl.on("line", (l) => {
      const m = /warren listening on (http:\S+)/.exec(l);
      if (m) u = m[1];
      if (l.startsWith("admin key file:")) {
        clearTimeout(timer);
        resolve(u);
      }
    });
    proc.on("exit", (c) => reject(new Error(`warren serve exited with ${c}`)));
  });
  const admin = readFileSync(join(data, "admin.key"), "utf8").trim();
  const exited = new Promise((r) => proc.on("exit", r));
  let seq = 0;
  return {
    url,
    admin,
    async tenantKey() {
      return new Client({ apiUrl: url, apiKey: admin }).createKey(`ts${++seq}`);
    },
    async stop() {
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * A loopback HTTP (or, with tls {cert, key}, HTTPS) server answering every
 * request with what it received as JSON (host, path, authorization);
 * hits counts requests by Host name.
 */
export async function startUpstream(tls) {
  const hits = {};
  const handler = (req, res) => {
    const host = (req.headers.host ?? "").split(":")[0];
    hits[host] = (hits[host] ?? 0) + 1;
    const body = JSON.stringify({ host, path: req.url, authorization: req.headers.authorization ?? "" });
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
    res.end(body);
  };
  const srv = tls ? createHttps(tls, handler) : createHttp(handler);
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return { port: srv.address().port, hits, close: () => srv.close() };
}

/** A self-signed certificate for SECRET_HOST made by openssl, or undefined without it. */
export function makeCert() {
  const openssl = which("openssl");
  if (!openssl) return undefined;
  const d = mkdtempSync(join(tmpdir(), "warren-tssdk-cert-"));
  const key = join(d, "key.pem"), cert = join(d, "cert.pem");
  execFileSync(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
    "-subj", `/CN=${SECRET_HOST}`, "-addext", `subjectAltName=DNS:${SECRET_HOST}`, "-days", "2"], { stdio: "ignore" });
  return { certFile: cert, cert: readFileSync(cert), key: readFileSync(key) };
}

/** The main test server: egress names mapped to loopback, loopback opened, the upstream's CA trusted. */
export async function startEgressServer(ca) {
  const d = mkdtempSync(join(tmpdir(), "warren-tssdk-hosts-"));
  const hosts = join(d, "hosts");
  writeFileSync(hosts, `127.0.0.1 ${ALLOWED} ${DENIED} ${SECRET_HOST}\n`);
  const flags = ["--egress-hosts", hosts, "--egress-allow-cidr", "127.0.0.1/32"];
  if (ca) flags.push("--egress-ca", ca);
  return startServer(flags);
}

async function freePort() {
  const srv = createHttp();
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const p = srv.address().port;
  await new Promise((r) => srv.close(r));
  return p;
}

/**
 * A `warren serve` whose blobs are in a real versitygw (S3) that pause()
 * stalls (SIGSTOP) and resume() resumes; a 1 MiB per-sandbox uncommitted
 * budget and a 300 ms budget wait. undefined without versitygw.
 */
export async function startStallable() {
  const gw = which("versitygw", join(process.env.GOPATH ?? join(homedir(), "go"), "bin"));
  if (!gw) return undefined;
  const tmp = mkdtempSync(join(tmpdir(), "warren-tssdk-s3-"));
  mkdirSync(join(tmp, "s3", "bucket"), { recursive: true });
  const port = await freePort();
  const access = "sdktestaccess", secret = "sdktestsecretkey";
  const gwp = spawn(gw, ["--access", access, "--secret", secret, "--port", `127.0.0.1:${port}`, "posix", join(tmp, "s3")], { stdio: "ignore" });
  const gwExit = new Promise((r) => gwp.on("exit", r));
  for (let i = 0; ; i++) {
    const up = await new Promise((r) => {
      const c = connect(port, "127.0.0.1", () => (c.end(), r(true)));
      c.on("error", () => r(false));
    });
    if (up) break;
    if (i > 400) {
      gwp.kill("SIGKILL");
      throw new Error("versitygw did not start");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const srv = await startServer(["--workers", "0", "--blobs", "s3://bucket/warren", "--s3-endpoint", `http://127.0.0.1:${port}`, "--s3-path-style",
    "--uncommitted-budget", "1MiB", "--budget-wait", "300ms", "--gc-interval", "0"],
  { ...process.env, AWS_ACCESS_KEY_ID: access, AWS_SECRET_ACCESS_KEY: secret });
  let stopped = false;
  return {
    url: srv.url,
    key: await srv.tenantKey(),
    pause: () => ((stopped = true), gwp.kill("SIGSTOP")),
    resume: () => ((stopped = false), gwp.kill("SIGCONT")),
    async stop() {
      if (stopped) gwp.kill("SIGCONT");
      await srv.stop();
      gwp.kill("SIGTERM");
      await gwExit;
    },
  };
}
