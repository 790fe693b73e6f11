// cspshim.js: lets xterm.js run under the console's strict CSP
// (style-src 'self', no 'unsafe-inline'). xterm.js writes its dynamic
// styles into style elements and, for true-colour cells, style
// attributes; the CSP blocks both. This module, imported before xterm,
// routes them through the CSSOM, which the CSP allows: a "style" made
// with document.createElement is an inert element whose text goes into a
// constructed stylesheet adopted by the document, and
// setAttribute("style") becomes style.cssText. Behaviour is otherwise the
// same.

const createElement = Document.prototype.createElement;
Document.prototype.createElement = function (tag, options) {
  if (String(tag).toLowerCase() !== "style") return createElement.call(this, tag, options);
  // Not a real style element: the browser checks every style element against the policy,
  // even an empty one, so xterm gets an inert element whose text goes to
  // an adopted stylesheet instead.
  const el = createElement.call(this, "warren-style");
  el.hidden = true;
  const doc = this;
  const sheet = new CSSStyleSheet();
  let text = "";
  Object.defineProperty(el, "textContent", {
    get() { return text; },
    set(v) {
      text = String(v ?? "");
      sheet.replaceSync(text);
      if (!doc.adoptedStyleSheets.includes(sheet)) doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    },
  });
  const remove = el.remove;
  el.remove = function () {
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
    remove.call(this);
  };
  return el;
};

const setAttribute = Element.prototype.setAttribute;
Element.prototype.setAttribute = function (name, value) {
  if (String(name).toLowerCase() === "style" && this instanceof HTMLElement) {
    this.style.cssText = String(value);
    return;
  }
  setAttribute.call(this, name, value);
};
