// "Show every number, the formula and the Python": q's coordinates as
// inputs, m and Z, the scaled-score strip, the shares strip, one card per
// source, the output and the comparison with q = [2, 1] (solid amber border:
// changed; dashed teal border: unchanged within 1e-12). Every word is the lab's:
// the answer's (display, compare) and the page's (pageWords().details).

import { cmpClass, cmpText, fill, h, s, srcClass, text } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";
import { messageFor, numberField } from "./fields.js";
import { drawStrip } from "./share.js";
import { placeLabels } from "../shared/plot.js";

const AXIS_W = 320;
const AXIS_H = 52;

/** A number in a box that carries the comparison border. */
function num(result, value, changed, field) {
  return h("span", { class: ["num-box", cmpClass(result, changed)], "data-field": field }, value, cmpText(result, changed, pageWords().details));
}

function drawScoreAxis(svg, result) {
  const { trace, display, geometry, compare } = result;
  const [lo, hi] = geometry.score_axis;
  const [loText, hiText] = geometry.score_ticks;
  const x = (v) => 12 + ((v - lo) / (hi - lo)) * (AXIS_W - 24);
  const parts = [
    s("line", { class: "axis", x1: x(lo), x2: x(hi), y1: 30, y2: 30 }),
    s("line", { class: "axis", x1: x(0), x2: x(0), y1: 24, y2: 36 }),
    s("text", { class: "tick", x: x(lo), y: 50, "text-anchor": "start" }, loText),
    s("text", { class: "tick", x: x(hi), y: 50, "text-anchor": "end" }, hiText),
  ];
  trace.scores.forEach((score, i) => {
    if (compare.active && compare.reference) {
      parts.push(s("circle", { class: "ring amber", cx: x(compare.reference.scores[i]), cy: 30, r: 7 }));
    }
    parts.push(s("circle", { class: `dot ${srcClass(i)}`, cx: x(score), cy: 30, r: 5 }));
    parts.push(s("text", { class: "label", x: x(score), y: i % 2 ? 21 : 11, "text-anchor": "middle" }, display.sources[i].score_mark));
  });
  svg.setAttribute("viewBox", `0 0 ${AXIS_W} ${AXIS_H}`);
  fill(svg, ...parts);
  placeLabels(svg, { grow: true }); // close scores would print their labels on each other
}

function card(result, i, words) {
  const { display, compare } = result;
  const src = display.sources[i];
  const ch = compare.changed;
  const changed = (list) => (ch ? list[i] : false);
  return h(
    "li",
    { class: ["card", srcClass(i)] },
    h("h4", null, h("span", { class: `swatch ${srcClass(i)}`, "aria-hidden": "true" }), src.card_title, " ", h("span", { class: "index" }, src.card_index)),
    h(
      "dl",
      null,
      h("dt", null, words.dot),
      h("dd", null, num(result, src.dot, changed(ch?.dots || []), `card-dot-${i}`)),
      h("dt", null, words.score),
      h("dd", null, num(result, src.score, changed(ch?.scores || []), `card-score-${i}`)),
      h("dt", null, words.share),
      h("dd", null, num(result, src.share, changed(ch?.weights || []), `card-share-${i}`)),
      h("dt", null, src.carry_term.map(([term, sub]) => [term, h("sub", null, sub)])),
      h("dd", null, num(result, src.carry, ch ? ch.carries[i].some(Boolean) : false, `card-carry-${i}`)),
    ),
  );
}

/** Mount the disclosure's live parts into `els`; returns draw(state). */
export function mountDetails(els, { onQuery }) {
  const words = pageWords();
  const qFields = words.query_fields.map((label, j) =>
    numberField({
      path: `q[${j}]`,
      label,
      onValue: (value) => onQuery(j, value),
    }),
  );
  fill(els.qFields, ...qFields.map((f) => f.el));

  return function draw(state) {
    const result = state.result;
    if (!result) return;
    const { display, compare } = result;
    qFields.forEach((f, j) => f.update(display.q_coords[j], messageFor(state.fieldErrors, `q[${j}]`)));
    const ch = compare.changed;
    const [before, between, after] = words.details.normalization;
    fill(
      els.normalization,
      before,
      num(result, display.m, ch ? ch.m : false, "m"),
      between,
      num(result, display.z, ch ? ch.z : false, "z"),
      after,
    );
    const said = display.labels; // the lab's labels, each {text, claims}
    text(els.scoreTitle, said.score_title.text);
    drawScoreAxis(els.scoreAxis, result);
    text(els.shareTitle, said.share_title.text);
    drawStrip(els.shareStrip, result);
    fill(els.cards, ...display.sources.map((_, i) => card(result, i, words.details)));
    fill(els.output, words.details.output, num(result, display.output, ch ? ch.output.some(Boolean) : false, "output"));
    fill(
      els.comparison,
      h("strong", null, compare.title.text),
      " ",
      compare.available ? compare.summary.text : compare.message,
    );
    els.comparisonBlock.classList.toggle("active", compare.active);
    text(els.formulaScale, said.score_formula.text);
    if (els.formulaCode) text(els.formulaCode, said.score_code.text);
    text(els.formulaScale2, said.scale_note.text);
  };
}
