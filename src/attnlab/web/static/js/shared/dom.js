// Small DOM helpers. Every text goes in through textContent or setAttribute,
// never innerHTML, so labels and messages are escaped by construction (CSP
// forbids inline script and style anyway).

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Append children (nodes, strings, numbers, arrays; null/false skipped).
 * @param {Element} el
 * @param {Array} children
 */
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function setAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  return el;
}

/** Make an HTML element: h("p", {class: "note"}, "text", child). */
export function h(tag, attrs, ...children) {
  return append(setAttrs(document.createElement(tag), attrs), children);
}

/** Make an SVG element: s("circle", {cx: 1, cy: 2, r: 3}). */
export function s(tag, attrs, ...children) {
  return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
}

/** Replace all children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Set text only when it changed (keeps screen readers quiet otherwise). */
export function text(el, value) {
  if (el.textContent !== value) el.textContent = value;
}

/** Place `messages` in `el`, one line each (a span.line per message); unchanged lines stay as they are. */
export function lines(el, messages) {
  const now = Array.from(el.children, (c) => c.textContent);
  if (now.length === messages.length && now.every((m, i) => m === messages[i]) && el.childNodes.length === now.length) return;
  fill(el, messages.map((m) => h("span", { class: "line" }, m)));
}

export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el;
}

/** CSS class for a source's colour: eight hues, one per source of an own example (1-8). */
export function srcClass(index) {
  return `src-${index % 8}`;
}

/**
 * Comparison class for a number: "" when the comparison is inactive,
 * "cmp-changed" (solid amber) or "cmp-same" (dashed teal) otherwise.
 */
export function cmpClass(result, changed) {
  if (!result.compare.active) return "";
  return changed ? "cmp-changed" : "cmp-same";
}

/** Visually hidden text for screen readers: `words.changed` or `words.same` (the lab's words). */
export function cmpText(result, changed, words) {
  if (!result.compare.active) return null;
  return h("span", { class: "sr-only" }, changed ? words.changed : words.same);
}
