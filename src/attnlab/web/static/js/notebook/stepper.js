// The stepper "Step N of 4": Vectors -> Match -> Share -> Mix. Its words come
// from the lab's data and its tables from the held example's explorer row:
// state.stepper, part of the page's one state answer (POST /api/state), so it
// stays connected to the explorer above and never asks the server itself.
// Previous / Next buttons, and the Left / Right arrow keys anywhere inside
// the stepper. Each step shown while the stepper is open is recorded as help
// ("stepper visited") for the attempt the learner left.

import { fill, h, text } from "../shared/dom.js";
import { recordHelp, subscribeNb } from "./state.js";
import { getState } from "../explorer/state.js";

export function mountStepper(els) {
  let data = null;
  let index = 0;

  function show() {
    if (!data) return;
    const step = data.steps[index];
    text(els.title, step.title);
    text(els.question, step.question);
    text(els.explanation, step.explanation);
    text(els.notation, step.notation);
    text(els.shapes, step.shapes);
    text(els.symbols, step.symbols);
    els.symbols.hidden = !step.symbols;
    text(els.inspectTitle, step.inspect);
    const table = step.table;
    fill(
      els.table,
      h("caption", null, table.caption),
      h("thead", null, h("tr", null, table.columns.map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        null,
        table.rows.map((row) => h("tr", null, h("th", { scope: "row" }, row[0]), row.slice(1).map((v) => h("td", { class: "num" }, v)))),
      ),
    );
    els.prev.disabled = index === 0;
    els.next.disabled = index === data.steps.length - 1;
  }

  // Drawn only while open, and only when the state's stepper changed.
  function refresh() {
    const next = getState().stepper;
    if (!next || !els.root.open || next === data) return;
    data = next;
    text(els.note, data.note);
    show();
  }

  function go(to) {
    if (!data || to < 0 || to >= data.steps.length || to === index) return;
    index = to;
    show();
    recordHelp("stepper", index + 1);
  }

  els.prev.addEventListener("click", () => go(index - 1));
  els.next.addEventListener("click", () => go(index + 1));
  els.root.addEventListener("keydown", (event) => {
    if (event.target.closest("input, textarea, select")) return;
    if (event.key === "ArrowRight") go(index + 1);
    else if (event.key === "ArrowLeft") go(index - 1);
    else return;
    event.preventDefault();
  });
  els.root.addEventListener("toggle", () => {
    if (!els.root.open) return;
    refresh();
    recordHelp("stepper", index + 1);
  });
  subscribeNb(() => refresh());
}
