// The glossary on the page: each term of jargon is defined where it first appears. The first
// occurrence of a term (in document order, among the text a learner can see) becomes a <dfn>
// that takes the keyboard focus and is described by the term's definition; hovering it or
// focusing it shows the definition in one tooltip (role="tooltip"), which Escape, moving away or
// leaving it hides. The terms, the forms they are written in and every definition are the lab's
// (lab/glossary.py, in the page's words block): this module only finds the forms the server
// names and places the server's words; it writes none of its own.
//
// Views redraw their text (fill, text): a MutationObserver notes when text holding a term is
// added, when a defined occurrence is removed, or when a part is shown or hidden, and the next
// animation frame moves each definition to its term's first occurrence again. Its own changes
// are taken back from the observer, so placing a definition never triggers another pass.

import { h } from "./dom.js";
import { pageWords } from "./words.js";

// Where a term is never defined: form controls and interactive elements (a focusable <dfn> inside
// them would nest focus), code, and what it draws itself.
const SKIP = new Set([
  "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "TITLE", "TEXTAREA", "INPUT", "SELECT", "OPTION",
  "BUTTON", "A", "SUMMARY", "LABEL", "OUTPUT", "CODE", "PRE", "DFN", "KBD", "SAMP",
]);
const HTML_NS = "http://www.w3.org/1999/xhtml";
const HIDE_MS = 150; // the pointer may cross the gap between a term and its tooltip

function escapeForm(form) {
  return form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The forms as the page may write them: as given, and with a capital first letter. */
function variants(form) {
  const capital = form[0].toUpperCase() + form.slice(1);
  return capital === form ? [form] : [form, capital];
}

/** Whether `el` hides its content from a reader: hidden, aria-hidden, or a closed disclosure's body. */
function concealed(el) {
  if (el.hidden || el.getAttribute("aria-hidden") === "true") return true;
  const parent = el.parentElement;
  return Boolean(parent && parent.tagName === "DETAILS" && !parent.open && el.tagName !== "SUMMARY");
}

/**
 * Define the glossary's terms where they first appear in `root` (the page's body), and keep them so
 * as the page redraws. Returns {scan, tip} (scan(): place the definitions now), or null where the
 * page has no glossary (a notebook widget).
 */
export function mountGlossary(root = document.body) {
  const glossary = pageWords().glossary;
  if (!glossary || !glossary.terms || !glossary.terms.length || !root) return null;
  const terms = glossary.terms;
  const termOf = new Map();
  const forms = [];
  for (const t of terms) {
    for (const f of t.forms) {
      for (const v of variants(f)) {
        termOf.set(v, t);
        forms.push(v);
      }
    }
  }
  forms.sort((a, b) => b.length - a.length); // a longer form wins over a shorter one it holds
  const pattern = `(?<![\\p{L}\\p{N}_])(?:${forms.map(escapeForm).join("|")})(?![\\p{L}\\p{N}_])`;
  const test = new RegExp(pattern, "u");
  const find = new RegExp(pattern, "gu");

  const definitions = h(
    "div",
    { hidden: true, "data-glossary": "definitions" },
    terms.map((t) => h("span", { id: `term-${t.id}` }, t.definition)),
  );
  const tip = h("div", { id: "term-tip", class: "term-tip", role: "tooltip", hidden: true, "data-glossary": "tip" });
  // inside the page's main landmark, where a reader (and axe) expects the page's content
  (document.querySelector("main") || document.body).append(definitions, tip);
  const placed = new Map(); // term id -> its <dfn>

  // --- the tooltip ----------------------------------------------------------------------
  let shownFor = null;
  let hideTimer = 0;
  function show(dfn) {
    clearTimeout(hideTimer);
    const t = terms.find((x) => x.id === dfn.dataset.term);
    if (!t) return;
    shownFor = dfn;
    tip.textContent = t.definition;
    tip.hidden = false;
    // below the term, inside the window; in the coordinates of the box the tooltip is placed in
    const r = dfn.getBoundingClientRect();
    const page = document.documentElement.clientWidth;
    const x = Math.max(8, Math.min(r.left, page - tip.offsetWidth - 8));
    const base = tip.offsetParent ? tip.offsetParent.getBoundingClientRect() : { left: -window.scrollX, top: -window.scrollY };
    tip.style.left = `${x - base.left}px`;
    tip.style.top = `${r.bottom + 6 - base.top}px`;
  }
  function hide() {
    clearTimeout(hideTimer);
    shownFor = null;
    tip.hidden = true;
  }
  function hideSoon() {
    clearTimeout(hideTimer);
    hideTimer = setTimeout(hide, HIDE_MS);
  }
  const termAt = (target) => (target instanceof Element ? target.closest("dfn.term") : null);
  document.addEventListener("mouseover", (e) => {
    const dfn = termAt(e.target);
    if (dfn) show(dfn);
    else if (e.target === tip) clearTimeout(hideTimer); // a tooltip a pointer can rest on
  });
  document.addEventListener("mouseout", (e) => {
    if (termAt(e.target) || e.target === tip) hideSoon();
  });
  document.addEventListener("focusin", (e) => {
    const dfn = termAt(e.target);
    if (dfn) show(dfn);
  });
  document.addEventListener("focusout", (e) => {
    if (termAt(e.target)) hide();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !tip.hidden) hide();
  });

  // --- placing the definitions -------------------------------------------------------------
  /** The first eligible occurrence of each term: Map(term id -> {node, index, length}). */
  function firstOccurrences() {
    const found = new Map();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode(node) {
        if (node.nodeType === Node.TEXT_NODE) return NodeFilter.FILTER_ACCEPT;
        if (node.namespaceURI !== HTML_NS || SKIP.has(node.tagName) || node.dataset.glossary || concealed(node)) {
          return NodeFilter.FILTER_REJECT;
        }
        return NodeFilter.FILTER_SKIP;
      },
    });
    for (let node = walker.nextNode(); node && found.size < terms.length; node = walker.nextNode()) {
      if (!test.test(node.data)) continue;
      find.lastIndex = 0;
      for (let m = find.exec(node.data); m; m = find.exec(node.data)) {
        const t = termOf.get(m[0]);
        if (!found.has(t.id)) found.set(t.id, { node, index: m.index, length: m[0].length, term: t });
      }
    }
    return found;
  }

  function unwrap(dfn) {
    // its text goes back as a text node of its own (no normalize(): that would merge away text
    // nodes a walk has just found)
    if (dfn.parentNode) dfn.parentNode.replaceChild(document.createTextNode(dfn.textContent), dfn);
  }

  function wrap({ node, index, length, term }) {
    const word = node.splitText(index);
    word.splitText(length);
    const dfn = h("dfn", { class: "term", tabindex: "0", "data-term": term.id, "aria-describedby": `term-${term.id}` });
    word.parentNode.replaceChild(dfn, word);
    dfn.append(word);
    return dfn;
  }

  /** Whether `el` is out of a reader's sight: inside a hidden part, or where terms are not defined. */
  function outOfSight(el) {
    for (let at = el.parentElement; at && at !== root; at = at.parentElement) {
      if (SKIP.has(at.tagName) || concealed(at)) return true;
    }
    return false;
  }

  function scan() {
    let found = firstOccurrences();
    // an occurrence already defined is its own first occurrence (the walk never enters a <dfn>)
    // unless it went away, out of sight, or a first occurrence now comes before it
    let moved = false;
    for (const [id, dfn] of [...placed]) {
      const first = found.get(id);
      const before = first && dfn.compareDocumentPosition(first.node) & Node.DOCUMENT_POSITION_PRECEDING;
      if (dfn.isConnected && !outOfSight(dfn) && !before) continue;
      if (shownFor === dfn) hide();
      unwrap(dfn);
      placed.delete(id);
      moved = true;
    }
    if (moved) found = firstOccurrences(); // the text given back may hold a first occurrence itself
    for (const [id, dfn] of placed) {
      const first = found.get(id);
      if (!first || dfn.compareDocumentPosition(first.node) & Node.DOCUMENT_POSITION_FOLLOWING) found.delete(id);
    }
    // wrap the new ones, the last in the document first, so a split never moves one still to come
    const todo = [...found.values()];
    todo.sort((a, b) => (a.node === b.node ? b.index - a.index : a.node.compareDocumentPosition(b.node) & Node.DOCUMENT_POSITION_FOLLOWING ? 1 : -1));
    for (const f of todo) placed.set(f.term.id, wrap(f));
  }

  // <html data-glossary-pending="1"> while a pass is due (set in the observer's microtask, so
  // before anything else can read the page after the change that asked for it), "0" once placed
  const flag = (on) => { document.documentElement.dataset.glossaryPending = on ? "1" : "0"; };
  let pending = 0;
  const observer = new MutationObserver((records) => {
    if (pending) return;
    if (records.some(matters)) {
      pending = requestAnimationFrame(run);
      flag(true);
    }
  });
  function matters(r) {
    const at = r.target.nodeType === Node.TEXT_NODE ? r.target.parentElement : r.target;
    if (at && at.closest("[data-glossary]")) return false; // the tooltip and the definitions: its own
    if (r.type === "attributes") return true;
    if (r.type === "characterData") return test.test(r.target.data);
    for (const n of r.addedNodes) {
      if (n.nodeType === Node.TEXT_NODE ? test.test(n.data) : n.namespaceURI === HTML_NS && !n.dataset.glossary && test.test(n.textContent)) return true;
    }
    for (const dfn of placed.values()) if (!dfn.isConnected) return true;
    return false;
  }
  function run() {
    pending = 0;
    scan();
    observer.takeRecords(); // its own changes need no second pass
    flag(false);
  }
  const watch = { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ["hidden", "open", "aria-hidden"] };
  scan();
  flag(false);
  observer.observe(root, watch);
  return { scan: run, tip };
}
