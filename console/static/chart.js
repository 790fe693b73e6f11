// chart.js: a line chart drawn by hand in SVG (a few dozen lines, smaller
// than any chart library). Series are arrays of [time ms, value].

const NS = "http://www.w3.org/2000/svg";

function el(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// lineChart draws series ({name, cls, points}) into svg, scaled to fit;
// fmt formats the y axis.
export function lineChart(svg, series, fmt = String) {
  const W = 400, H = 160, L = 56, R = 8, T = 10, B = 20;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.replaceChildren();
  const all = series.flatMap((s) => s.points);
  if (!all.length) {
    const t = el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "axis" });
    t.textContent = "waiting for data…";
    svg.append(t);
    return;
  }
  const x0 = Math.min(...all.map((p) => p[0])), x1 = Math.max(...all.map((p) => p[0]), x0 + 1);
  let y1 = Math.max(...all.map((p) => p[1]), 0);
  y1 = y1 <= 0 ? 1 : y1 * 1.1;
  const x = (v) => L + ((v - x0) / (x1 - x0)) * (W - L - R);
  const y = (v) => T + (1 - v / y1) * (H - T - B);
  for (const f of [0, 0.5, 1]) {
    const v = y1 * f;
    svg.append(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
    const t = el("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", class: "axis" });
    t.textContent = fmt(v);
    svg.append(t);
  }
  const span = el("text", { x: W - R, y: H - 4, "text-anchor": "end", class: "axis" });
  span.textContent = `last ${Math.round((x1 - x0) / 1000)} s`;
  svg.append(span);
  for (const s of series) {
    if (!s.points.length) continue;
    const d = s.points.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    svg.append(el("path", { d, class: "line " + (s.cls || ""), "vector-effect": "non-scaling-stroke" }));
  }
}
