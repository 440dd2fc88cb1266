// The AttentionView / ModelView widget's view: the Real model page's own
// pictures (one head's heatmap and lines, the token toolbar, the ink legend,
// every head's thumbnail, layer by layer) drawn from what the kernel sends:
// `_model` (the model view), `_head` (one head, as /real-model's head answer)
// and `_row` (the focused query's shares at full precision), with every word
// (`_names.words`: lab/realmodel/page.py's widget_words; `_tokens`: each token's
// label, short form and exact text). Picking a layer, a head or a query sets the
// `layer`, `head` or `focus` trait; the kernel answers with new JSON. Ids are
// prefixed per widget.

import { fill, h, s, text } from "../shared/dom.js";
import { drawHeatmap, drawLines, drawTokens, markToken } from "../realmodel/draw.js";
import { drawHeads } from "../realmodel/heads.js";
import { legend, sharesImage } from "../realmodel/ink.js";

let count = 0;

function pick(model, name, value) {
  if (model.get(name) === value) return;
  model.set(name, value);
  model.save_changes();
}

/** Mount the head views into `el`; returns the cleanup function. */
export function mount(el, model) {
  const id = (name) => `attnlab-h${count}-${name}`;
  count += 1;
  const names = model.get("_names");
  const words = names.words;
  const layerSelect = h("select", { id: id("layer") },
    names.layers.map((name, i) => h("option", { value: String(i) }, name)));
  layerSelect.addEventListener("change", () => pick(model, "layer", Number(layerSelect.value)));
  const tokens = h("div", { class: "rm-tokens", role: "toolbar", "aria-label": words.tokens });
  const heatmap = s("svg", { class: "rm-heatmap", role: "img" });
  const lines = s("svg", { class: "rm-lines", role: "img" });
  const kind = h("p", { class: "rm-head-kind" });
  const breadth = h("p", { class: "hint" });
  const view = model.get("_model");
  const images = view.heads.map((hd) => sharesImage(hd.thumb)); // painted once: the thumbnails never change
  const image = (hd) => images[hd.layer * view.n_head + hd.head];
  const layerBoxes = names.layers.map(() => h("div", { class: "rm-heads" }));
  const rowTitle = h("h3", { id: id("row-title") });
  const rowBody = h("tbody");
  const box = h("div", { class: "rm-main" },
    h("section", { class: "rm-panel", "aria-labelledby": id("head-title") },
      h("h2", { id: id("head-title") }, words.head_heading),
      h("p", { class: "rm-field" }, h("label", { for: id("layer") }, words.layer), layerSelect),
      tokens,
      h("div", { class: "rm-pictures" },
        h("figure", { class: "rm-figure" }, heatmap, h("figcaption", {}, words.heatmap_caption)),
        h("figure", { class: "rm-figure" }, lines, h("figcaption", {}, words.lines_caption))),
      legend(model.get("_head").legend), // a mask: the grey swatch too
      kind, breadth,
      h("div", { class: "rm-row" }, rowTitle,
        h("div", { class: "rm-row-scroll", tabindex: "0", role: "region", "aria-labelledby": id("row-title") },
          h("table", { class: "rm-row-table" },
            h("thead", {}, h("tr", {},
              h("th", { scope: "col" }, words.key), h("th", { scope: "col" }, words.share),
              h("th", { scope: "col" }, words.precise))),
            rowBody)))),
    h("section", { class: "rm-panel", "aria-labelledby": id("heads-title") },
      h("h2", { id: id("heads-title") }, words.model_heading),
      layerBoxes.map((box, l) => h("div", { class: "rm-model-row", role: "group", "aria-labelledby": id(`layer-${l}`) },
        h("h3", { id: id(`layer-${l}`) }, names.layers[l]), box))));
  el.replaceChildren(box);

  function drawTokenBar() {
    drawTokens(tokens, { tokens: model.get("_tokens"), focus: model.get("focus"), onFocus: (i) => pick(model, "focus", i) });
  }

  function draw() {
    const shown = model.get("_tokens");
    const head = model.get("_head");
    const row = model.get("_row");
    const focus = model.get("focus");
    layerSelect.value = String(model.get("layer"));
    markToken(tokens, focus);
    drawHeatmap(heatmap, { tokens: shown, head, focus });
    drawLines(lines, { tokens: shown, head, focus });
    text(kind, head.kind_words);
    text(breadth, head.breadth_words);
    const [layer, selected] = [model.get("layer"), model.get("head")];
    layerBoxes.forEach((box, l) => drawHeads(box, {
      heads: view.heads.slice(l * view.n_head, (l + 1) * view.n_head),
      image,
      kvGroups: names.kv_groups,
      headNames: names.heads, groupNames: names.kv_group_names, // the kernel's words
      selected: l === layer ? selected : -1,
      onPick: (hd) => {
        model.set("layer", l);
        model.set("head", hd);
        model.save_changes();
      },
    }));
    text(rowTitle, row.title);
    fill(rowBody, row.sources.map((src) =>
      h("tr", { class: src.allowed ? "" : "is-blocked", "data-index": src.index },
        h("th", { scope: "row", title: src.exact }, src.label),
        h("td", { class: "num" }, src.share),
        h("td", { class: "num", "data-field": "precise" }, src.precise))));
  }

  drawTokenBar();
  draw();
  model.on("change:_row", draw);
  return () => model.off("change:_row", draw);
}
