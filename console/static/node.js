// node.js: the Node page: the server's own /metrics, sampled every two
// seconds and kept for the last few minutes in the page.

import * as api from "./api.js";
import { h, clear, bytes, banner, errText } from "./dom.js";
import { lineChart } from "./chart.js";

const POLL_MS = 2000;
const KEEP = 90; // samples (3 minutes)

// quantile estimates q from a cumulative histogram [[le, count]] the way
// Prometheus' histogram_quantile does (linear within a bucket).
export function quantile(q, buckets) {
  if (!buckets.length) return NaN;
  const total = buckets[buckets.length - 1][1];
  if (total <= 0) return NaN;
  const rank = q * total;
  let prevLe = 0, prevC = 0;
  for (const [le, c] of buckets) {
    if (c >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + (le - prevLe) * ((rank - prevC) / Math.max(c - prevC, 1e-9));
    }
    prevLe = le; prevC = c;
  }
  return prevLe;
}

function one(ms, name, labels = {}) {
  const m = ms.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return m ? m.value : NaN;
}

function execBuckets(ms) {
  return ms.filter((m) => m.name === "warren_exec_duration_seconds_bucket")
    .map((m) => [m.labels.le === "+Inf" ? Infinity : Number(m.labels.le), m.value])
    .sort((a, b) => a[0] - b[0]);
}

const ms = (s) => (isNaN(s) ? "—" : s < 1 ? (s * 1000).toFixed(s < 0.01 ? 2 : 0) + " ms" : s.toFixed(2) + " s");

export function render(main) {
  let stopped = false, timer = 0, prev = null;
  const hist = { running: [], standby: [], rate: [], p50: [], p99: [], heap: [], sys: [] };
  const stat = (id, label) => h("div", { class: "stat" }, h("div", { class: "muted" }, label), h("div", { class: "big", id }, "—"));
  const svg = (id, label) => { const s = document.createElementNS("http://www.w3.org/2000/svg", "svg"); s.id = id; s.setAttribute("role", "img"); s.setAttribute("aria-label", label); s.classList.add("chart"); return s; };
  const charts = {
    sandboxes: svg("chart-sandboxes", "Sandboxes by state over time"),
    rate: svg("chart-rate", "Execs per second over time"),
    latency: svg("chart-latency", "Exec latency p50 and p99 over time"),
    memory: svg("chart-memory", "Memory over time"),
  };
  const legend = (...items) => h("p", { class: "legend" }, items.map(([cls, t]) => h("span", { class: "key " + cls }, t)));
  main.append(
    h("h1", {}, "Node"),
    h("p", { class: "muted" }, "From this server's /metrics, every 2 s. Counts are for the whole node, not only your sandboxes."),
    h("div", { class: "stats" }, stat("stat-running", "Running"), stat("stat-standby", "Standby"), stat("stat-rate", "Execs/s"),
      stat("stat-p50", "Exec p50"), stat("stat-p99", "Exec p99"), stat("stat-heap", "Heap in use"), stat("stat-delta", "Deltas in memory")),
    h("div", { class: "charts" },
      h("section", { class: "card" }, h("h2", {}, "Sandboxes by state"), charts.sandboxes, legend(["s1", "running"], ["s2", "standby"])),
      h("section", { class: "card" }, h("h2", {}, "Exec rate"), charts.rate, legend(["s1", "execs/s"])),
      h("section", { class: "card" }, h("h2", {}, "Exec latency"), charts.latency, legend(["s1", "p50"], ["s2", "p99"]), h("p", { class: "muted hint" }, "Over each 2 s interval; from the cumulative histogram before the second sample.")),
      h("section", { class: "card" }, h("h2", {}, "Memory"), charts.memory, legend(["s1", "Go heap in use"], ["s2", "from the OS"]))),
  );

  function push(k, t, v) { hist[k].push([t, v]); if (hist[k].length > KEEP) hist[k].shift(); }

  async function sample() {
    let m;
    try { m = await api.metrics(); } catch (e) { if (!stopped) banner("Cannot read /metrics: " + errText(e)); return; }
    if (stopped) return; // the user left the page while the sample was on its way
    banner("");
    const t = Date.now();
    const cur = { t, execs: one(m, "warren_execs_total"), buckets: execBuckets(m) };
    push("running", t, one(m, "warren_sandboxes", { state: "running" }));
    push("standby", t, one(m, "warren_sandboxes", { state: "standby" }));
    push("heap", t, one(m, "warren_memory_bytes", { kind: "heap_inuse" }));
    push("sys", t, one(m, "warren_memory_bytes", { kind: "sys" }));
    let buckets = cur.buckets;
    if (prev) {
      push("rate", t, Math.max(0, (cur.execs - prev.execs) / ((t - prev.t) / 1000)));
      // The interval's own histogram, when execs ran in it.
      const d = cur.buckets.map(([le, c], i) => [le, c - (prev.buckets[i] ? prev.buckets[i][1] : 0)]);
      if (d.length && d[d.length - 1][1] > 0) buckets = d;
    }
    const p50 = quantile(0.5, buckets), p99 = quantile(0.99, buckets);
    if (!isNaN(p50)) { push("p50", t, p50); push("p99", t, p99); }
    prev = cur;
    const set = (id, v) => { document.getElementById(id).textContent = v; };
    set("stat-running", hist.running.at(-1)[1]);
    set("stat-standby", hist.standby.at(-1)[1]);
    set("stat-rate", hist.rate.length ? hist.rate.at(-1)[1].toFixed(1) : "—");
    set("stat-p50", ms(p50));
    set("stat-p99", ms(p99));
    set("stat-heap", bytes(hist.heap.at(-1)[1]));
    set("stat-delta", bytes(one(m, "warren_delta_bytes")));
    lineChart(charts.sandboxes, [{ cls: "s1", points: hist.running }, { cls: "s2", points: hist.standby }], (v) => v.toFixed(v < 10 ? 1 : 0));
    lineChart(charts.rate, [{ cls: "s1", points: hist.rate }], (v) => v.toFixed(1));
    lineChart(charts.latency, [{ cls: "s1", points: hist.p50 }, { cls: "s2", points: hist.p99 }], ms);
    lineChart(charts.memory, [{ cls: "s1", points: hist.heap }, { cls: "s2", points: hist.sys }], bytes);
    main.dataset.samples = String(hist.running.length);
  }

  async function poll() {
    await sample();
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }
  poll();
  return () => { stopped = true; clearTimeout(timer); };
}
