// The held example: one row per query (one per token of the A/B/C sequence, or
// the one query of an example of its own), one column per source.
// Each cell shows the scaled score and share from the server, or "blocked"
// on a hatched cell when the mask refuses it (never a coloured zero). The
// checkbox in a cell is the mask (checked = may attend); a change that would
// leave a row with nothing allowed is refused by the server, and the message
// shows here while the previous mask stays. "Show in the explorer" puts a
// masked row into the explorer above.

import { fill, h, text } from "../shared/dom.js";
import { subscribeNb } from "./state.js";
import { editHeld, getState } from "../explorer/state.js";

function cell(view, r, i) {
  const held = view.example;
  const row = view.rows[r];
  const label = held.labels[i];
  const blocked = view.blocked[r][i];
  const box = h("input", {
    type: "checkbox",
    id: `mask-${r}-${i}`,
    "data-row": r,
    "data-source": i,
    "aria-label": `Row ${r} (${held.labels[r]}) may attend to ${label}`,
  });
  box.checked = !blocked;
  box.addEventListener("change", () => {
    editHeld({ kind: "mask", row: r, source: i, allowed: box.checked });
  });
  const numbers = blocked
    ? h("span", { class: "seq-blocked-text" }, "blocked")
    : h(
        "span",
        { class: "seq-numbers" },
        h("span", { class: "seq-score", "data-field": `score-${r}-${i}` }, `s ${row.scores_text[i]}`),
        h("span", { class: "seq-share", "data-field": `share-${r}-${i}` }, row.weights_text[i]),
      );
  return h(
    "td",
    { class: blocked ? "seq-cell blocked" : "seq-cell", "data-cell": `${r}-${i}` },
    numbers,
    h("label", { class: "seq-toggle", for: `mask-${r}-${i}` }, box, h("span", { "aria-hidden": "true" }, "may attend")),
  );
}

function rowHeader(view, r) {
  const held = view.example;
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
    showing ? "In the explorer" : "Show in the explorer",
  );
  button.addEventListener("click", () => editHeld({ kind: "select", row: r, masked: true }));
  return h(
    "th",
    { scope: "row" },
    h("span", { class: "seq-row-name" }, `Row ${r} (${held.labels[r]})`),
    h("span", { class: "seq-query" }, `q = [${held.queries[r].join(", ")}]`),
    button,
  );
}

/**
 * Mount the sequence view into its elements. It draws explorer/state.js's held example
 * (state.held, state.heldMessage) when notebook/state.js says it changed: after the
 * explorer's frame, so a drag's numbers are never held back by the table.
 */
export function mountSequence(els) {
  els.unmasked.addEventListener("click", () => editHeld({ kind: "select", row: 0, masked: false }));

  let last = null; // what was drawn: study actions also notify, and need no redraw
  function draw() {
    const state = getState();
    const view = state.held;
    if (last && last.view === view && last.message === state.heldMessage) return;
    last = { view, message: state.heldMessage };
    text(els.message, state.heldMessage);
    els.message.hidden = !state.heldMessage;
    if (!view) return;
    const held = view.example;
    text(els.explorerNote, view.explorer.line);
    els.unmasked.setAttribute("aria-pressed", !held.masked && held.row === 0 ? "true" : "false");
    const focused = els.table.contains(document.activeElement) ? document.activeElement.id : null;
    fill(
      els.table,
      h("caption", null, view.caption),
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          h("th", { scope: "col" }, "Row (query)"),
          held.labels.map((label) => h("th", { scope: "col" }, `Source ${label}`)),
          h("th", { scope: "col" }, "Output o"),
        ),
      ),
      h(
        "tbody",
        null,
        view.rows.map((row, r) =>
          h(
            "tr",
            { class: held.row === r && held.masked ? "seq-current" : "" },
            rowHeader(view, r),
            held.labels.map((_, i) => cell(view, r, i)),
            h("td", { class: "seq-output", "data-field": `output-${r}` }, row.output_text),
          ),
        ),
      ),
    );
    if (focused) document.getElementById(focused)?.focus(); // redraws keep keyboard focus
    fill(els.summaries, view.rows.map((row) => h("li", null, `Row ${row.row}: ${row.summary}`)));
  }

  subscribeNb(draw);
  draw();
}
