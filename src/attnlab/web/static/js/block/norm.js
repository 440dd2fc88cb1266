// Pre-norm or post-norm, and which positions: the block's two switches, and
// the side-by-side view of the stepper's current step in both placements.
// The server sends the other placement's walk and, for every tensor both
// walks name, which cells differ (|Δ| > 1e-12); this view only marks them.

import { fill, h, text } from "../shared/dom.js";
import { tensorView } from "./matrix.js";
import { setBlock, subscribeBlock } from "./state.js";

// The choices' values; their labels are the server's (answer.choices), placed on each answer.
const NORMS = ["pre", "post"];
const POSITIONS = ["none", "sinusoidal", "rope"];

function radios(name, legend, values, onPick) {
  const inputs = new Map();
  const labels = new Map();
  const set = h(
    "fieldset",
    { class: "block-radios", id: `block-${name}` },
    h("legend", null, legend),
    values.map((value) => {
      const input = h("input", { type: "radio", name: `block-${name}`, value, id: `block-${name}-${value}` });
      input.addEventListener("change", () => input.checked && onPick(value));
      inputs.set(value, input);
      const label = h("label", { for: `block-${name}-${value}` });
      labels.set(value, label);
      return h("div", { class: "choice-row" }, input, label);
    }),
  );
  return {
    set,
    update: (value) => inputs.forEach((input, v) => (input.checked = v === value)),
    label: (choices) => choices.forEach(([v, words]) => labels.has(v) && text(labels.get(v), words)),
  };
}

/** The placement and positions switches (mounted once, updated in place). */
export function mountSwitches(root) {
  const norm = radios("norm", "Where the norms sit", NORMS, (v) => setBlock({ norm: v }));
  const pos = radios("positions", "Positions", POSITIONS, (v) => setBlock({ positions: v }));
  root.append(h("div", { class: "block-switches" }, norm.set, pos.set));
  subscribeBlock((block) => {
    if (block.answer) {
      norm.label(block.answer.choices.norm);
      pos.label(block.answer.choices.positions);
    }
    const shown = block.requested || block.request;
    if (!shown) return;
    norm.update(shown.norm);
    pos.update(shown.positions);
  });
}

/** Both placements side by side for the stepper's current step; changed cells marked. */
export function mountNormCompare(root) {
  const summary = h("p", { id: "block-norm-summary", class: "block-caption" });
  const here = h("div", { class: "block-side", id: "block-side-here" });
  const other = h("div", { class: "block-side", id: "block-side-other" });
  root.append(
    summary,
    h("p", { class: "hint" }, "Cells with a solid amber border change when the norms move; the rest are equal within 1e-12. The step follows the stepper above."),
    h("div", { class: "block-sides" }, here, other),
  );
  let drawn = null;
  subscribeBlock((block) => {
    const answer = block.answer;
    if (!answer) return;
    const key = `${block.step}`;
    if (drawn && drawn.answer === answer && drawn.key === key) return;
    drawn = { answer, key };
    const cmp = answer.norm_compare;
    text(summary, cmp.summary.text);
    const step = answer.steps[block.step];
    const twin = cmp.steps.find((s) => s.id === step.id);
    const side = (el, s, prefix) =>
      fill(
        el,
        s ? [h("h4", null, s.side_heading), s.tensors.map((t) => tensorView(t, { changed: cmp.changed[t.name], idPrefix: prefix }))] : h("p", { class: "hint" }, "No such step here."),
      );
    side(here, step, "here");
    side(other, twin, "other");
  });
}
