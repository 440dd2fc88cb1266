// Placing the server's strings on the Circuits page: a sentence, a list of tokens, a table, a
// picker's options, an error line. Every string comes from an answer (or the page's words);
// nothing here writes a word or formats a number. A number drawn with its descriptor (the
// server's `how`) is marked for "How is this computed?" (numbers.js).
import { fill, h, text } from "../shared/dom.js";

/**
 * Mark `el` as a number of its view: the server's descriptor `how` and the value the view holds.
 * Nothing is marked without a descriptor (a number with no program of its own).
 * @template {Element} E
 * @param {E} el
 * @param {object|null|undefined} how
 * @param {number|null|undefined} value
 * @returns {E}
 */
export function markNumber(el, how, value) {
  if (!how) return el;
  el.setAttribute("data-how", JSON.stringify(how));
  if (typeof value === "number") el.setAttribute("data-value", JSON.stringify(value));
  return el;
}

/**
 * A sentence the server wrote ({text, claims}) as a paragraph; null when there is none.
 * @param {{display: string, how?: object, value?: number}[]} marks numbers the sentence states, each as
 *   the server printed it (`display`, found in order in the text): marked with their descriptors
 */
export function said(sentence, cls = "", marks = []) {
  if (!sentence) return null;
  const parts = [];
  let rest = sentence.text;
  for (const m of marks) {
    const at = m.display && m.how ? rest.indexOf(m.display) : -1;
    if (at < 0) continue;
    parts.push(rest.slice(0, at), markNumber(h("span", { class: "ci-num" }, m.display), m.how, m.value));
    rest = rest.slice(at + m.display.length);
  }
  return h("p", { class: ["ci-said", cls] }, parts, rest);
}

/**
 * Tokens as chips: each its label and its printed value, its exact text (or title) on hover.
 * @param {{label: string, exact?: string, display?: string, title?: string, how?: object}[]} tokens
 * @param {string} value the field of a token holding the number it shows ("p", "logit"): with its `how`,
 *   the chip is marked as that number
 */
export function chips(tokens, cls = "", value = "") {
  return h("ul", { class: ["ci-chips", cls] }, tokens.map((t) => markNumber(h(
    "li", { class: ["ci-chip", t.counted === false && "is-off", t.counted && "is-counted"], title: t.title ?? t.exact },
    h("span", {}, t.label), t.display ? h("span", { class: "ci-value" }, t.display) : null,
  ), value && t.how, t[value])));
}

/**
 * A scrollable table: `columns` (strings) and rows of cells (strings or nodes).
 * @param {string[]} columns
 * @param {{cells: (string|Node)[], title?: string, top?: boolean, nums?: number[],
 *   hows?: Record<number, [object|undefined, number]>}[]} rows nums: cell indices that are numbers;
 *   hows: a number cell's descriptor and value, by cell index
 * @param {string} label the region's name (a heading's text the server sent)
 */
export function table(columns, rows, label) {
  const head = h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c))));
  const body = h("tbody", {}, rows.map((r) => h(
    "tr", { title: r.title, class: r.top ? "is-top" : null },
    r.cells.map((c, i) => markNumber(h("td", { class: (r.nums || []).includes(i) ? "num" : null }, c),
      r.hows?.[i]?.[0], r.hows?.[i]?.[1])),
  )));
  return h("div", { class: "ci-table-box", tabindex: "0", role: "region", "aria-label": label },
    h("table", { class: "ci-table" }, head, body));
}

/** Fill a <select> with {value, label} options, keeping `value` (or the first) chosen. */
export function options(select, items, value) {
  fill(select, items.map((o) => h("option", { value: String(o.value) }, o.label)));
  const wanted = String(value ?? "");
  select.value = items.some((o) => String(o.value) === wanted) ? wanted : String(items[0]?.value ?? "");
}

/** Show `message` in an error line (hidden when empty), and mark `field` invalid with it. */
export function showError(el, message, field = null) {
  text(el, message || "");
  el.hidden = !message;
  if (field) field.setAttribute("aria-invalid", message ? "true" : "false");
}
