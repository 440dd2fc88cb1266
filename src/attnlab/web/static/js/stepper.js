// The stepper "Step N of 4": Vectors -> Match -> Share -> Mix. Its words come
// from the lab's data and its tables from the explorer's current trace (POST
// /api/notebook/stepper), so it stays connected to the explorer above.
// Previous / Next buttons, and the Left / Right arrow keys anywhere inside
// the stepper. Each step shown while the stepper is open is recorded as help
// ("stepper visited") for the attempt the learner left.

import { fill, h, text } from "./dom.js";
import { toJson } from "./json.js";
import { nbPost } from "./nbapi.js";
import { getHeld, recordHelp, subscribeNb } from "./nbstate.js";

export function mountStepper(els) {
  let data = null;
  let index = 0;
  let heldKey = "";

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

  async function refresh() {
    const held = getHeld();
    if (!held || !els.root.open) return;
    const key = toJson(held); // a -0 edit is a change too
    if (key === heldKey && data) return;
    heldKey = key;
    const answer = await nbPost("stepper", { held });
    if (answer.ok && key === heldKey) {
      data = answer.body;
      text(els.note, data.note);
      show();
    }
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
  els.root.addEventListener("toggle", async () => {
    if (!els.root.open) return;
    await refresh();
    recordHelp("stepper", index + 1);
  });
  subscribeNb(() => refresh());
}
