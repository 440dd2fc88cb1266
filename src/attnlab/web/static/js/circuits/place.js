// Placing the server's strings on the Circuits page: a sentence, a list of tokens, a table, a
// picker's options, an error line. Every string comes from an answer (or the page's words);
// nothing here writes a word or formats a number.
import { fill, h, text } from "../shared/dom.js";

/** A sentence the server wrote ({text, claims}) as a paragraph; null when there is none. */
export function said(sentence, cls = "") {
  return sentence ? h("p", { class: ["ci-said", cls] }, sentence.text) : null;
}

/**
 * Tokens as chips: each its label and its printed value, its exact text (or title) on hover.
 * @param {{label: string, exact?: string, display?: string, title?: string}[]} tokens
 */
export function chips(tokens, cls = "") {
  return h("ul", { class: ["ci-chips", cls] }, tokens.map((t) => h(
    "li", { class: ["ci-chip", t.counted === false && "is-off", t.counted && "is-counted"], title: t.title ?? t.exact },
    h("span", {}, t.label), t.display ? h("span", { class: "ci-value" }, t.display) : null,
  )));
}

/**
 * A scrollable table: `columns` (strings) and rows of cells (strings or nodes).
 * @param {string[]} columns
 * @param {{cells: (string|Node)[], title?: string, top?: boolean, nums?: number[]}[]} rows nums: cell indices that are numbers
 * @param {string} label the region's name (a heading's text the server sent)
 */
export function table(columns, rows, label) {
  const head = h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c))));
  const body = h("tbody", {}, rows.map((r) => h(
    "tr", { title: r.title, class: r.top ? "is-top" : null },
    r.cells.map((c, i) => h("td", { class: (r.nums || []).includes(i) ? "num" : null }, c)),
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
