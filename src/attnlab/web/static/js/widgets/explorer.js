// The Explorer widget's view: the page's Match, Share and Mix panels, the
// words and every number, drawn by the page's own modules from `_result`
// (the kernel's answer, the shape of POST /api/trace). A drag or an arrow key
// sets the `q` trait; the kernel traces it and sends the new `_result`.
// Ids are prefixed per widget, so several explorers can share a notebook.

import { h, s, text } from "../shared/dom.js";
import { mountMatch } from "../explorer/match.js";
import { drawValuePlane } from "../explorer/mix.js";
import { drawPrecise } from "../explorer/precise.js";
import { drawPie, drawScoreTable, drawStrip } from "../explorer/share.js";
import { drawWords } from "../explorer/words.js";

let count = 0;

/** Mount one explorer into `el`; returns the cleanup function. */
export function mount(el, model) {
  const id = (name) => `attnlab-x${count}-${name}`;
  count += 1;
  const step = (name, title, ...body) =>
    h("section", { class: "step", id: id(`step-${name}`), "aria-labelledby": id(`${name}-title`) },
      h("h3", { id: id(`${name}-title`) }, title), ...body);
  const match = s("svg", { class: "plane draggable", role: "group", "aria-labelledby": id("match-title"), "aria-describedby": id("match-help") });
  const pie = s("svg", { class: "pie", role: "img", "aria-label": "Attention shares as a pie; the numbers are in the table below" });
  const strip = s("svg", { class: "strip", role: "img", "aria-label": "Attention shares as a strip in source order; the numbers are in the table below" });
  const table = h("table", { class: "score-table" });
  const mix = s("svg", { class: "plane", role: "img", "aria-label": "Value plane: the values, the carries w·v added tip to tail, the hull of the values and the output o" });
  const caption = h("p", { class: "caption" });
  const summary = h("p", { class: "summary", "aria-live": "polite", "data-field": "summary" });
  const words = { match: h("p"), share: h("p"), mix: h("p") };
  const precise = h("ul", { class: "precise-list" });
  const box = h("section", { class: "explorer", "aria-labelledby": id("title") },
    h("h2", { id: id("title") }, "Follow one query through attention"),
    caption,
    h("div", { class: "steps" },
      step("match", "1 Match: how far does q reach along each key?", match,
        h("p", { id: id("match-help"), class: "hint" }, "Drag anywhere in the plane, or focus q and use the arrow keys (Shift for steps of 1).")),
      step("share", "2 Share: softmax turns scores into one pie", pie, strip, table),
      step("mix", "3 Mix: the output is the shares’ blend of the values", mix)),
    summary,
    h("div", { class: "words" }, words.match, words.share, words.mix),
    h("details", { class: "disclosure" }, h("summary", {}, "Every number at full precision"), precise));
  el.replaceChildren(box);

  const plot = mountMatch(match, {
    onQuery: (q) => {
      model.set("q", q);
      model.save_changes();
    },
    getQuery: () => model.get("q"),
    describe: id("match-help"),
  });

  function draw() {
    const result = model.get("_result");
    if (!result || !result.trace) return;
    plot.draw(result);
    drawPie(pie, result);
    drawStrip(strip, result);
    drawScoreTable(table, result);
    drawValuePlane(mix, result, "mix");
    drawWords(words, result);
    drawPrecise(precise, result);
    text(caption, `q = ${result.display.q} · Compare the query with each key.`);
    text(summary, result.words.summary);
  }
  model.on("change:_result", draw);
  draw();
  return () => model.off("change:_result", draw);
}
