// The Explorer widget's view: the page's Match, Share and Mix panels, the
// words and every number, drawn by the page's own modules from `_result`
// (the kernel's answer, the shape of POST /api/trace). A drag or an arrow key
// sets the `q` trait; the kernel traces it and sends the new `_result`.
// Every word is the lab's: the fixed ones in `_words` (lab/explorer/page.py,
// sent once), the rest in the answer. Ids are prefixed per widget, so several
// explorers can share a notebook. A snapshot (`to_html`, whose frozen model says
// `_snapshot`) draws the same numbers with no handle to drag, and says it is a snapshot.

import { h, s, text } from "../shared/dom.js";
import { drawKeyPlane, mountMatch } from "../explorer/match.js";
import { SIZE } from "../shared/plot.js";
import { drawValuePlane } from "../explorer/mix.js";
import { drawPrecise } from "../explorer/precise.js";
import { drawPie, drawScoreTable, drawStrip } from "../explorer/share.js";
import { drawWords } from "../explorer/words.js";

let count = 0;

/** Mount one explorer into `el`; returns the cleanup function. */
export function mount(el, model) {
  const id = (name) => `attnlab-x${count}-${name}`;
  count += 1;
  const words = model.get("_words");
  const [first, second, third] = words.steps;
  const step = (name, { number, title }, ...body) =>
    h("section", { class: "step", id: id(`step-${name}`), "aria-labelledby": id(`${name}-title`) },
      h("h3", { id: id(`${name}-title`) }, h("span", { class: "step-num", "aria-hidden": "true" }, number), title), ...body);
  const frozen = Boolean(model.get("_snapshot"));
  const match = frozen
    ? s("svg", { class: "plane", role: "img", "aria-label": words.snapshot_plane, "aria-describedby": id("match-help"), viewBox: `0 0 ${SIZE} ${SIZE}` })
    : s("svg", { class: "plane draggable", role: "group", "aria-labelledby": id("match-title"), "aria-describedby": id("match-help") });
  const pie = s("svg", { class: "pie", role: "img", "aria-label": words.pie });
  const strip = s("svg", { class: "strip", role: "img", "aria-label": words.strip });
  const table = h("table", { class: "score-table" });
  const mix = s("svg", { class: "plane", role: "img", "aria-label": words.mix_plot });
  const caption = h("p", { class: "caption" });
  const help = h("p", { id: id("match-help"), class: "hint" });
  const summary = h("p", { class: "summary", "aria-live": "polite", "data-field": "summary" });
  const paragraphs = { match: h("p"), share: h("p"), mix: h("p") };
  const precise = h("ul", { class: "precise-list" });
  const box = h("section", { class: "explorer", "aria-labelledby": id("title") },
    h("h2", { id: id("title") }, words.title),
    caption,
    h("div", { class: "steps" },
      step("match", first, match, help),
      step("share", second, pie, strip, table),
      step("mix", third, mix)),
    summary,
    h("div", { class: "words" }, paragraphs.match, paragraphs.share, paragraphs.mix),
    h("details", { class: "disclosure" }, h("summary", {}, words.precise), precise));
  el.replaceChildren(box);

  let plot;
  if (frozen) {
    const layer = s("g");
    match.append(layer);
    plot = { draw: (result) => drawKeyPlane(layer, result, "match") };
  } else {
    plot = mountMatch(match, {
      onQuery: (q) => {
        model.set("q", q);
        model.save_changes();
      },
      getQuery: () => model.get("q"),
      describe: id("match-help"),
    });
  }

  function draw() {
    const result = model.get("_result");
    if (!result || !result.trace) return;
    plot.draw(result);
    drawPie(pie, result);
    drawStrip(strip, result);
    drawScoreTable(table, result);
    drawValuePlane(mix, result, "mix");
    drawWords(paragraphs, result);
    drawPrecise(precise, result);
    text(caption, result.display.labels.caption.text);
    text(help, frozen ? words.snapshot_help : result.display.words.match_help);
    text(summary, result.words.summary);
  }
  model.on("change:_result", draw);
  draw();
  return () => model.off("change:_result", draw);
}
