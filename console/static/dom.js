// dom.js: a tiny element builder and the formatting helpers the pages
// share. Text goes in as text nodes, never as HTML, so names from a
// sandbox cannot inject markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el) { el.replaceChildren(); return el; }

export function bytes(n) {
  if (n === undefined || n === null) return "—";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + u[i];
}

export function ago(t) {
  if (!t) return "—";
  const s = Math.max(0, (Date.now() - Date.parse(t)) / 1000);
  if (s < 60) return Math.floor(s) + "s ago";
  if (s < 3600) return Math.floor(s / 60) + "m ago";
  if (s < 86400) return Math.floor(s / 3600) + "h ago";
  return Math.floor(s / 86400) + "d ago";
}

export function age(t) {
  const a = ago(t);
  return a.endsWith(" ago") ? a.slice(0, -4) : a;
}

// banner shows an error (or a notice) above the page until dismissed or
// replaced; errors are never silent and never a blank page.
export function banner(msg, kind = "error") {
  const b = document.getElementById("banner");
  if (!msg) { b.hidden = true; clear(b); return; }
  clear(b).append(h("span", { class: "msg" }, msg), h("button", { type: "button", class: "link", "aria-label": "Dismiss", onclick: () => banner("") }, "×"));
  b.className = "banner " + kind;
  b.hidden = false;
}

export function errText(e) {
  return e && e.message ? (e.code ? `${e.message} (${e.code})` : e.message) : String(e);
}

// ask opens the page's <dialog>: a confirmation, or a prompt when label
// is given. Resolves to false/null on cancel.
export function ask(text, { label, value = "", ok = "OK", danger = false } = {}) {
  const d = document.getElementById("dialog");
  document.getElementById("dialog-text").textContent = text;
  const field = document.getElementById("dialog-field");
  const input = document.getElementById("dialog-input");
  field.hidden = !label;
  document.getElementById("dialog-label").textContent = label || "";
  input.value = value;
  const okBtn = document.getElementById("dialog-ok");
  okBtn.textContent = ok;
  okBtn.className = danger ? "danger" : "primary";
  return new Promise((resolve) => {
    d.addEventListener("close", () => {
      const yes = d.returnValue === "ok";
      resolve(label ? (yes ? input.value : null) : yes);
    }, { once: true });
    d.returnValue = "";
    d.showModal();
    if (label) { input.focus(); input.select(); } else okBtn.focus();
  });
}
