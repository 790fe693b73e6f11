// app.js: sign-in, the hash router and the page lifecycle. Each page is a
// module exporting render(main, params) that returns a cleanup function
// (stopping its polling) for when the user navigates away.

import * as api from "./api.js";
import { h, clear, banner, errText } from "./dom.js";
import * as sandboxesPage from "./sandboxes.js";
import * as sandboxPage from "./sandbox.js";
import * as nodePage from "./node.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let cleanup = null;

function signIn(message) {
  nav.hidden = true;
  const input = h("input", { id: "key", type: "password", name: "key", autocomplete: "off", required: true, spellcheck: "false", "aria-describedby": "signin-error" });
  const error = h("p", { id: "signin-error", class: "error", role: "alert" }, message || "");
  const form = h("form", { class: "card signin", id: "signin" },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "Paste an API key. It is kept in this tab only and sent as a header."),
    h("label", { for: "key" }, "API key"), input,
    h("div", { class: "row end" }, h("button", { type: "submit", class: "primary", id: "signin-submit" }, "Sign in")),
    error);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const k = input.value.trim();
    error.textContent = "";
    try {
      await api.json("GET", "/v1/sandboxes", { key: k });
    } catch (e) {
      error.textContent = e.status === 401 ? "Sign-in failed: that API key is not known to this server." : "Sign-in failed: " + errText(e);
      input.select();
      return;
    }
    api.setKey(k);
    route();
  });
  clear(main).append(form);
  input.focus();
}

function route() {
  if (cleanup) { cleanup(); cleanup = null; }
  banner("");
  if (!api.key()) { signIn(); return; }
  nav.hidden = false;
  const hash = location.hash.replace(/^#/, "") || "/";
  let page = sandboxesPage, params = {}, name = "sandboxes";
  const m = /^\/sandbox\/([^/]+)$/.exec(hash);
  if (m) { page = sandboxPage; params = { id: decodeURIComponent(m[1]) }; name = "sandbox"; }
  else if (hash === "/node") { page = nodePage; name = "node"; }
  for (const a of nav.querySelectorAll("a")) a.toggleAttribute("aria-current", a.dataset.nav === name || (name === "sandbox" && a.dataset.nav === "sandboxes"));
  document.body.dataset.page = name;
  clear(main);
  try {
    cleanup = page.render(main, params) || null;
  } catch (e) {
    banner("This page failed to load: " + errText(e));
  }
}

document.getElementById("signout").addEventListener("click", () => {
  api.clearKey();
  location.hash = "#/";
  route();
});

// A key revoked while signed in: back to the sign-in form, with a reason.
window.addEventListener("warren:unauthorized", () => {
  api.clearKey();
  if (cleanup) { cleanup(); cleanup = null; }
  signIn("Your API key is no longer accepted; sign in again.");
});
window.addEventListener("hashchange", route);
window.addEventListener("unhandledrejection", (ev) => {
  if (ev.reason && ev.reason.name === "AbortError") { ev.preventDefault(); return; }
  banner(errText(ev.reason));
});
route();
