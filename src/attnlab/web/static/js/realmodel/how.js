// "How is this computed?": the runnable NumPy program behind a number a view shows. A
// disclosure per view: the view's numbers (the server's list, GET /api/models/programs/words),
// pickers for the fields a number needs (a key token, a coordinate, a block…), and, once open,
// the server's program for the chosen number (GET /api/models/jobs/{id}/program?kind=…), with
// what it reproduces, a copy button and a download. A view that names its number itself (the
// Circuits page: the number picked in the view, with the text it ran on) gives no choice list,
// and the program is asked for with the text (POST /api/models/program). Every word and the
// program are the server's; this module places them and builds the request from the view's
// state (no sentence, no maths).
import { fill, h, text } from "../shared/dom.js";
import { getJSON, postJSON } from "../shared/http.js";
import { keptJSON } from "./job.js";
import { fillIn } from "./words.js";

let wordsAsked = null;

/** The control's words, fetched once for the page. */
function programWords() {
  wordsAsked ??= getJSON("/api/models/programs/words");
  return wordsAsked;
}

function download(body, name) {
  const url = URL.createObjectURL(new Blob([body], { type: "text/x-python" }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Add a "How is this computed?" disclosure for one view's numbers.
 * @param {string|null} view "head", "neuron", "next" or "journey": which numbers it offers (the server's
 *   list); null: the context names the number itself (`number`), and no choice or picker is shown
 * @param {() => ({jobId?: string, source?: object, number?: object, fields?: Record<string, string|number>,
 *   pickers?: Record<string, {options: {value: string|number, label: string}[], value: string|number}>,
 *   valueOf?: (choice: string, picked: Record<string, string>) => number|undefined}|null)} context
 *   the view's state now: `fields` it fixes (layer, head, position…), `pickers` for the fields a number
 *   may need (their options and the view's current value), `valueOf` the number the view holds for a choice
 *   (sent so the program names it); or `number`, the whole descriptor of the number the view picked (its
 *   `value` included). `jobId`: the kept trace the number is of; or `source`, the text it ran on
 *   (`{model, ids, tokens, path, corrupt_ids?}`, a circuits view's `program_source`). Null while the view
 *   shows nothing
 * @returns {{element: HTMLDetailsElement, refresh: () => void}} place `element`; call `refresh()` when
 *   the view's state changes
 */
export function setupHow(view, context) {
  const summary = h("summary", {});
  const lede = h("p", { class: "hint" });
  const choose = h("select", { class: "rm-how-choice" });
  const chooseLabel = h("label", { class: "rm-field" }, h("span", {}), choose);
  const pickers = h("div", { class: "rm-how-pickers" });
  const says = h("p", { class: "rm-how-says" });
  const title = h("p", { class: "rm-how-title" });
  const code = h("code", {});
  const pre = h("pre", { class: "rm-how-program", tabindex: "0" }, code);
  const status = h("p", { class: "hint rm-how-status", role: "status" });
  const copy = h("button", { type: "button" });
  const save = h("button", { type: "button" });
  const out = h("div", { class: "rm-how-out", hidden: true }, says, title, pre,
    h("div", { class: "rm-how-buttons" }, copy, save), status);
  const element = h("details", { class: "rm-how", "data-view": view }, summary, lede,
    h("div", { class: "rm-controls", hidden: !view }, chooseLabel, pickers), out);

  let words = null;
  let answer = null;
  let ticket = 0;
  const selects = {}; // field -> its picker's <select>, kept while its options stay the same
  const shown = {}; // field -> the options list drawn in it

  programWords().then((w) => {
    words = w;
    text(summary, w.summary);
    text(lede, w.lede);
    text(chooseLabel.firstChild, w.fields.choice);
    if (view) fill(choose, w.views[view].map((c) => h("option", { value: c.value }, c.label)));
    text(copy, w.copy);
    pre.setAttribute("aria-label", w.program_label);
    drawPickers();
    load(); // opened before the words came
  }).catch(() => {});

  let ranks = null;

  /** A picker the control fills itself: the rank of a strongest unit or of a top token (the server's labels). */
  function builtIn(need) {
    if (need !== "rank") return null;
    ranks ??= { options: words.ranks.map((label, i) => ({ value: i, label })), value: null };
    return ranks;
  }

  function choice() {
    return view ? words?.views[view].find((c) => c.value === choose.value) ?? null : null;
  }

  /** One <select> per field the chosen number needs, its options the view's. */
  function drawPickers() {
    const c = choice();
    const at = context();
    if (!c || !at) return;
    const boxes = [];
    for (const need of c.needs) {
      const picker = at.pickers[need] ?? builtIn(need);
      if (!picker) continue;
      let select = selects[need];
      if (!select || shown[need] !== picker.options) {
        select = selects[need] = h("select", { "data-field": need, onchange: load },
          picker.options.map((o) => h("option", { value: o.value }, o.label)));
        shown[need] = picker.options;
      }
      // the view's current value (a focused token, say); null: keep the reader's choice
      if (picker.value !== null && picker.value !== undefined) select.value = String(picker.value);
      boxes.push(h("label", { class: "rm-field" }, h("span", {}, words.fields[need]), select));
    }
    fill(pickers, boxes);
  }

  /** The descriptor of the number to show: the view's own, or the chosen one with the pickers' fields. */
  function descriptor(at) {
    if (at.number) return at.number;
    const c = choice();
    if (!c) return null;
    const picked = Object.fromEntries(c.needs.filter((n) => selects[n]).map((n) => [n, selects[n].value]));
    const query = { kind: c.kind, ...at.fields, ...c.fixed, ...picked };
    const value = at.valueOf?.(c.value, picked);
    if (typeof value === "number" && Number.isFinite(value)) query.value = value;
    return query;
  }

  /** Fetch and show the chosen number's program (only while the disclosure is open). */
  async function load() {
    const at = context();
    const query = element.open && words && at ? descriptor(at) : null;
    if (!query) return;
    const mine = ++ticket;
    text(status, words.writing);
    try {
      const a = at.source
        ? await postJSON("/api/models/program", { ...at.source, ...query })
        : await keptJSON(`/api/models/jobs/${encodeURIComponent(at.jobId)}/program?${new URLSearchParams(query)}`);
      if (mine !== ticket) return;
      answer = a;
      text(says, a.says.text);
      text(title, a.title);
      text(code, a.program);
      text(save, fillIn(words.download, { file: a.file_name }));
      text(status, "");
      out.hidden = false;
      element.dataset.drawn = a.file_name; // what is on screen (tests wait for it)
    } catch (problem) {
      if (mine !== ticket) return;
      answer = null;
      out.hidden = true;
      text(status, problem.message);
    }
  }

  choose.addEventListener("change", () => { drawPickers(); load(); });
  element.addEventListener("toggle", () => { if (element.open) { drawPickers(); load(); } });
  copy.addEventListener("click", async () => {
    if (!answer) return;
    try {
      await navigator.clipboard.writeText(answer.program);
      text(status, words.copied);
    } catch {
      // no clipboard permission: select the program so Ctrl+C copies it
      const range = document.createRange();
      range.selectNodeContents(code);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      text(status, words.copy_failed);
    }
  });
  save.addEventListener("click", () => {
    if (answer) download(answer.program, answer.file_name);
  });

  return {
    element,
    refresh() {
      drawPickers();
      load();
    },
  };
}
