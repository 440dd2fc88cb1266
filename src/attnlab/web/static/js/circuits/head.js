// What one head reads and writes at one query token: its query-key products before and after
// RoPE (with the KV head its group shares), and the tokens its value→output direction promotes
// for the keys it attends to most (a decoder). A job of the model worker; every string is the server's.
import { byId, fill, h } from "../shared/dom.js";
import { setupNumbers } from "./numbers.js";
import { chips, markNumber, said, table } from "./place.js";
import { panel, wire } from "./ablation.js";

function draw(out, v) {
  const rows = v.keys.map((k) => ({
    title: k.title, cells: [k.label, k.before_display, k.after_display, k.weight_display], nums: [1, 2, 3],
    hows: { 1: [k.how?.before, k.before], 2: [k.how?.after, k.after], 3: [k.how?.weight, k.weight] },
  }));
  const parts = [h("h4", {}, v.title), said(v.group_words), said(v.rope_words), said(v.scale_words),
    table(v.columns, rows, v.title)];
  if (v.writes) {
    parts.push(said(v.writes.words), h("ul", { class: "ci-sources" }, v.writes.sources.map((src) => h("li", {},
      h("span", { title: src.exact }, src.label),
      markNumber(h("span", { class: "ci-value" }, src.weight_display), src.how, src.weight),
      chips(src.promoted, "", "logit")))),
    said(v.writes.written_words), chips(v.writes.written, "", "logit"));
  } else {
    parts.push(said(v.no_writes));
  }
  fill(out, parts);
  out.dataset.drawn = `${v.layer}/${v.head}/${v.query}`;
}

/** @param {{model: () => string, text: () => string, words: () => object}} page */
export function setupHead(page) {
  const els = panel("head");
  const numbers = setupNumbers(els.out, "head", page);
  const layer = byId("ci-head-layer");
  const head = byId("ci-head-head");
  const position = byId("ci-head-position");
  wire(els, page, "/api/circuits/head", () => ({
    model: page.model(), text: page.text(), layer: Number(layer.value), head: Number(head.value),
    position: Number(position.value),
  }), (v) => {
    draw(els.out, v);
    numbers.drawn({ source: v.program_source });
  }, { layer, head, position, text: byId("ci-text") });
}
