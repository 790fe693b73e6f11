// api.js: the console's only way to the server. The key lives in
// sessionStorage (gone with the tab) and travels only in the
// Authorization header, never in a URL.

const KEY = "warren.key";

export function key() { return sessionStorage.getItem(KEY) || ""; }
export function setKey(k) { sessionStorage.setItem(KEY, k); }
export function clearKey() { sessionStorage.removeItem(KEY); }

// APIError carries the server's {"error":{"code","message"}}.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function errorOf(resp) {
  let code = "http_" + resp.status, message = resp.status + " " + resp.statusText;
  try {
    const body = await resp.json();
    if (body && body.error) { code = body.error.code; message = body.error.message; }
  } catch (_) { /* not JSON: keep the status line */ }
  return new APIError(resp.status, code, message);
}

// raw sends one request and returns the Response, throwing APIError on a
// status >= 400. opts.key overrides the stored key (sign-in).
export async function raw(method, path, opts = {}) {
  const headers = { Authorization: "Bearer " + (opts.key ?? key()) };
  let body = opts.body;
  if (opts.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.json);
  }
  let resp;
  try {
    resp = await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store", signal: opts.signal });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new APIError(0, "network", "cannot reach the server: " + e.message);
  }
  if (resp.status >= 400) {
    const err = await errorOf(resp);
    if (resp.status === 401 && !opts.key) window.dispatchEvent(new CustomEvent("warren:unauthorized", { detail: err }));
    throw err;
  }
  return resp;
}

export async function json(method, path, opts) {
  const resp = await raw(method, path, opts);
  if (resp.status === 204) return null;
  return resp.json();
}

const enc = encodeURIComponent;

export const sandboxes = () => json("GET", "/v1/sandboxes");
export const sandbox = (id) => json("GET", `/v1/sandboxes/${enc(id)}`);
export const create = (req) => json("POST", "/v1/sandboxes", { json: req });
export const remove = (id) => json("DELETE", `/v1/sandboxes/${enc(id)}`);
export const fork = (id) => json("POST", `/v1/sandboxes/${enc(id)}/fork`, { json: {} });
export const hibernate = (id) => json("POST", `/v1/sandboxes/${enc(id)}/hibernate`);
export const resume = (id) => json("POST", `/v1/sandboxes/${enc(id)}/resume`);
export const snapshot = (id, name) => json("POST", `/v1/sandboxes/${enc(id)}/snapshots`, { json: { name } });
export const snapshots = () => json("GET", "/v1/snapshots");
export const deleteSnapshot = (name) => json("DELETE", `/v1/snapshots/${enc(name)}`);
export const generations = (id) => json("GET", `/v1/sandboxes/${enc(id)}/generations`);
export const images = () => json("GET", "/v1/images");
export const processes = (id) => json("GET", `/v1/sandboxes/${enc(id)}/processes`);
export const startPTY = (id, cols, rows) => json("POST", `/v1/sandboxes/${enc(id)}/processes`, { json: { pty: { cols, rows } } });
export const startProcess = (id, script) => json("POST", `/v1/sandboxes/${enc(id)}/processes`, { json: { script } });
export const signal = (id, pid, sig) => json("POST", `/v1/sandboxes/${enc(id)}/processes/${pid}/signal`, { json: { signal: sig } });

export const listFiles = (id, path) => json("GET", `/v1/sandboxes/${enc(id)}/files?list=true&path=${enc(path)}`);
export const stat = (id, path) => json("GET", `/v1/sandboxes/${enc(id)}/files?stat=true&path=${enc(path)}`);
export async function readFile(id, path, length) {
  const q = length ? `&length=${length}` : "";
  const resp = await raw("GET", `/v1/sandboxes/${enc(id)}/files?path=${enc(path)}${q}`);
  return new Uint8Array(await resp.arrayBuffer());
}
export const writeFile = (id, path, data) => raw("PUT", `/v1/sandboxes/${enc(id)}/files?path=${enc(path)}`, { body: data });
export const deleteFile = (id, path) => json("DELETE", `/v1/sandboxes/${enc(id)}/files?path=${enc(path)}&recursive=true`);
export const move = (id, from, to) => json("POST", `/v1/sandboxes/${enc(id)}/files/move`, { json: { from, to } });
export const mkdir = (id, path) => json("POST", `/v1/sandboxes/${enc(id)}/files/mkdir`, { json: { path } });

// events reads an NDJSON stream, calling onEvent for each object.
export async function events(resp, onEvent) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) onEvent(JSON.parse(line));
    }
    if (done) break;
  }
  if (buf.trim()) onEvent(JSON.parse(buf));
}

// exec runs a script and streams its events.
export async function exec(id, script, onEvent, signal) {
  const resp = await raw("POST", `/v1/sandboxes/${enc(id)}/exec`, { json: { script }, signal });
  await events(resp, onEvent);
}

export async function attach(id, pid, onEvent, signal) {
  const resp = await raw("GET", `/v1/sandboxes/${enc(id)}/processes/${pid}/attach`, { signal });
  await events(resp, onEvent);
}

// metrics fetches /metrics (no key needed) and parses the text format
// into [{name, labels, value}].
export async function metrics() {
  const resp = await fetch("/metrics", { cache: "no-store", credentials: "omit" });
  if (!resp.ok) throw new APIError(resp.status, "metrics", "GET /metrics: " + resp.status);
  return parseMetrics(await resp.text());
}

export function parseMetrics(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}
