// Pre-norm or post-norm, and which positions: the block's two switches, and
// the side-by-side view of the stepper's current step in both placements.
// The server sends the other placement's walk and, for every tensor both
// walks name, which cells differ (|Δ| > 1e-12); this view only marks them.
// The switches' choices and every label are the lab's (answer.choices, answer.words).

import { fill, h, text } from "../shared/dom.js";
import { tensorView } from "./matrix.js";
import { getBlock, setBlock, subscribeBlock } from "./state.js";

/** A fieldset of radios for `choices` ([[value, label], ...], the server's). */
function radios(name, legend, choices, onPick) {
  const inputs = new Map();
  const set = h(
    "fieldset",
    { class: "block-radios", id: `block-${name}` },
    h("legend", null, legend),
    choices.map(([value, label]) => {
      const input = h("input", { type: "radio", name: `block-${name}`, value, id: `block-${name}-${value}` });
      input.addEventListener("change", () => input.checked && onPick(value));
      inputs.set(value, input);
      return h("div", { class: "choice-row" }, input, h("label", { for: `block-${name}-${value}` }, label));
    }),
  );
  return { set, update: (value) => inputs.forEach((input, v) => (input.checked = v === value)) };
}

/** The placement and positions switches (mounted once the first walk is in, updated in place). */
export function mountSwitches(root, words) {
  const choices = getBlock().answer.choices;
  const norm = radios("norm", words.norm, choices.norm, (v) => setBlock({ norm: v }));
  const pos = radios("positions", words.positions, choices.positions, (v) => setBlock({ positions: v }));
  root.append(h("div", { class: "block-switches" }, norm.set, pos.set));
  subscribeBlock((block) => {
    const shown = block.requested || block.request;
    if (!shown) return;
    norm.update(shown.norm);
    pos.update(shown.positions);
  });
}

/** Both placements side by side for the stepper's current step; changed cells marked. */
export function mountNormCompare(root, words) {
  const summary = h("p", { id: "block-norm-summary", class: "block-caption" });
  const here = h("div", { class: "block-side", id: "block-side-here" });
  const other = h("div", { class: "block-side", id: "block-side-other" });
  root.append(summary, h("p", { class: "hint" }, words.hint.text), h("div", { class: "block-sides" }, here, other));
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
        s ? [h("h4", null, s.side_heading), s.tensors.map((t) => tensorView(t, { changed: cmp.changed[t.name], changedNote: words.changed_cell, idPrefix: prefix }))] : h("p", { class: "hint" }, words.no_step),
      );
    side(here, step, "here");
    side(other, twin, "other");
  });
}
