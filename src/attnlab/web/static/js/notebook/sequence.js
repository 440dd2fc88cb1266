// The held example: one row per query (one per token of the A/B/C sequence, or
// the one query of an example of its own), one column per source.
// Each cell shows the scaled score and share from the server, or "blocked"
// on a hatched cell when the mask refuses it (never a coloured zero). The
// checkbox in a cell is the mask (checked = may attend); a change that would
// leave a row with nothing allowed is refused by the server, and the message
// shows here while the previous mask stays. "Show in the explorer" puts a
// masked row into the explorer above, scrolls the learner up to it and moves the
// keyboard focus to its row label, so the change it made is where they are.
// Every word is the lab's: the held view's (lab/explorer/view.py) and the page's
// (pageWords().sequence).

import { fill, h, lines, text } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";
import { subscribeNb } from "./state.js";
import { editHeld, getState, subscribe } from "../explorer/state.js";

const REVEAL_WAIT_MS = 5000; // how long focus waits for the explorer to show the row asked for

/**
 * Take the learner to the explorer that "Show in the explorer" changed: scroll it into view now, and
 * move focus to its row label (focusable by script only) once the label names row `r`, masked, so a
 * screen reader reads the row that is shown. A refused select never steals the focus later.
 */
function revealExplorer(r) {
  const explorer = document.getElementById("explorer");
  const label = document.getElementById("row-label");
  if (!explorer || !label) return;
  label.setAttribute("tabindex", "-1");
  explorer.scrollIntoView({ block: "start" });
  const shown = () => {
    const held = getState().held;
    return Boolean(held && held.example.row === r && held.example.masked);
  };
  if (shown()) return label.focus({ preventScroll: true });
  let off = null;
  const timer = setTimeout(() => off && off(), REVEAL_WAIT_MS);
  off = subscribe(() => {
    if (!shown()) return;
    off();
    clearTimeout(timer);
    requestAnimationFrame(() => label.focus({ preventScroll: true })); // after the explorer's redraw
  });
}

function cell(view, r, i, words) {
  const row = view.rows[r];
  const blocked = view.blocked[r][i];
  const box = h("input", {
    type: "checkbox",
    id: `mask-${r}-${i}`,
    "data-row": r,
    "data-source": i,
    "aria-label": row.mask_labels[i],
  });
  box.checked = !blocked;
  box.addEventListener("change", () => {
    editHeld({ kind: "mask", row: r, source: i, allowed: box.checked });
  });
  const numbers = blocked
    ? h("span", { class: "seq-blocked-text" }, words.blocked)
    : h(
        "span",
        { class: "seq-numbers" },
        h("span", { class: "seq-score", "data-field": `score-${r}-${i}` }, row.score_marks[i]),
        h("span", { class: "seq-share", "data-field": `share-${r}-${i}` }, row.weights_text[i]),
      );
  return h(
    "td",
    { class: blocked ? "seq-cell blocked" : "seq-cell", "data-cell": `${r}-${i}` },
    numbers,
    h("label", { class: "seq-toggle", for: `mask-${r}-${i}` }, box, h("span", { "aria-hidden": "true" }, words.may_attend)),
  );
}

function rowHeader(view, r, words) {
  const held = view.example;
  const row = view.rows[r];
  const showing = held.row === r && held.masked;
  const button = h(
    "button",
    {
      type: "button",
      id: `show-row-${r}`,
      class: "seq-show",
      "data-show-row": r,
      "aria-pressed": showing ? "true" : "false",
    },
    showing ? words.in_explorer : words.show,
  );
  button.addEventListener("click", () => {
    editHeld({ kind: "select", row: r, masked: true });
    revealExplorer(r);
  });
  return h("th", { scope: "row" }, h("span", { class: "seq-row-name" }, row.name), h("span", { class: "seq-query" }, row.query_text), button);
}

/**
 * Mount the sequence view into its elements. It draws explorer/state.js's held example
 * (state.held, state.heldMessages) when notebook/state.js says it changed: after the
 * explorer's frame, so a drag's numbers are never held back by the table.
 */
export function mountSequence(els) {
  const words = pageWords().sequence;
  els.unmasked.addEventListener("click", () => editHeld({ kind: "select", row: 0, masked: false }));

  let last = null; // what was drawn: study actions also notify, and need no redraw
  function draw() {
    const state = getState();
    const view = state.held;
    if (last && last.view === view && last.messages === state.heldMessages) return;
    last = { view, messages: state.heldMessages };
    lines(els.message, state.heldMessages);
    els.message.hidden = !state.heldMessages.length;
    if (!view) return;
    const held = view.example;
    text(els.title, view.title.text);
    text(els.explorerNote, view.explorer.line.text);
    els.unmasked.setAttribute("aria-pressed", !held.masked && held.row === 0 ? "true" : "false");
    const focused = els.table.contains(document.activeElement) ? document.activeElement.id : null;
    fill(
      els.table,
      h("caption", null, view.caption.text),
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          h("th", { scope: "col" }, words.row_query),
          view.sources.map((name) => h("th", { scope: "col" }, name)),
          h("th", { scope: "col" }, words.output),
        ),
      ),
      h(
        "tbody",
        null,
        view.rows.map((row, r) =>
          h(
            "tr",
            { class: held.row === r && held.masked ? "seq-current" : "" },
            rowHeader(view, r, words),
            held.labels.map((_, i) => cell(view, r, i, words)),
            h("td", { class: "seq-output", "data-field": `output-${r}` }, row.output_text),
          ),
        ),
      ),
    );
    if (focused) document.getElementById(focused)?.focus(); // redraws keep keyboard focus
    fill(els.summaries, view.rows.map((row) => h("li", null, row.summary.text)));
  }

  subscribeNb(draw);
  draw();
}
