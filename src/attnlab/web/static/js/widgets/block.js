// The Block widget's view: the transformer-block walk as the page steps it
// (the step list, Previous / Next, the Left / Right arrow keys), each step's
// caption and every tensor drawn by the page's own tensorView (block/matrix.js)
// from `_page.steps` (the kernel's block_page answer). Moving the stepper or
// changing the norm placement / positions sets a trait; the kernel answers.
// Every word is the answer's: the menus' choices (`_page.choices`), the heading
// and the controls (`_page.words`: its widget and walk labels).

import { fill, h, text } from "../shared/dom.js";
import { tensorView } from "../block/matrix.js";

let count = 0;

function save(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

/** Mount the walk into `el`; returns the cleanup function. */
export function mount(el, model) {
  const id = (name) => `attnlab-b${count}-${name}`;
  const prefix = `attnlab-b${count}`;
  count += 1;
  const first = model.get("_page");
  const words = first.words;
  const select = (name, label, choices) => {
    const box = h("select", { id: id(name) }, choices.map(([value, shown]) => h("option", { value }, shown)));
    box.addEventListener("change", () => save(model, name, box.value));
    return { box, field: h("span", { class: "field" }, h("label", { for: id(name) }, label), box) };
  };
  const { box: norm, field: normField } = select("norm", words.widget.norm, first.choices.norm);
  const { box: positions, field: posField } = select("positions", words.widget.positions, first.choices.positions);
  const summary = h("p", { class: "block-summary" });
  const list = h("ol", { class: "block-steps", "aria-label": words.walk.steps_label });
  const title = h("h3", { class: "block-step-title", tabindex: "-1" });
  const caption = h("p", { class: "block-caption" });
  const tensors = h("div", { class: "block-tensors" });
  const prev = h("button", { type: "button" }, words.walk.previous);
  const next = h("button", { type: "button" }, words.walk.next);
  const go = (i) => {
    const n = model.get("_page").steps.length;
    save(model, "step", Math.min(n - 1, Math.max(0, i)));
  };
  prev.addEventListener("click", () => go(model.get("step") - 1));
  next.addEventListener("click", () => go(model.get("step") + 1));
  const panel = h("div", { class: "block-walk" },
    list,
    h("div", { class: "block-step", "aria-live": "polite" }, title, caption),
    h("p", { class: "controls" }, prev, next, h("span", { class: "hint" }, words.walk.keys)),
    tensors);
  panel.addEventListener("keydown", (event) => {
    if (event.target.closest("td, input, select")) return; // cells use the arrows to move between numbers
    if (event.key === "ArrowRight") go(model.get("step") + 1);
    else if (event.key === "ArrowLeft") go(model.get("step") - 1);
  });
  el.replaceChildren(h("section", { class: "block", "aria-labelledby": id("title") },
    h("h2", { id: id("title") }, words.widget.title),
    h("p", { class: "controls" }, normField, posField), summary, panel));

  function draw() {
    const page = model.get("_page");
    const at = Math.min(model.get("step"), page.steps.length - 1);
    norm.value = model.get("norm");
    positions.value = model.get("positions");
    text(summary, page.summary.text);
    fill(list, page.steps.map((s, i) =>
      h("li", null, h("button", {
        type: "button", class: "block-step-link", "data-step": s.id,
        "aria-current": i === at ? "step" : null, onclick: () => go(i),
      }, s.link))));
    const step = page.steps[at];
    text(title, step.heading);
    text(caption, step.caption.text);
    prev.disabled = at === 0;
    next.disabled = at === page.steps.length - 1;
    fill(tensors, step.tensors.map((t) => tensorView(t, { idPrefix: `${prefix}-${at}` })));
  }
  model.on("change:step", draw);
  model.on("change:_page", draw);
  draw();
  return () => {
    model.off("change:step", draw);
    model.off("change:_page", draw);
  };
}
