// The model view (BertViz's, in small multiples): every layer x head of the
// trace at once, each thumbnail labelled with its kind, its scores on hover.
// The server bins long texts into at most 32 x 32 blocks (GET
// /api/models/jobs/{id}/model-view, a block = its largest share) and writes
// every label, title, layer name and definition; hovering or focusing a token highlights
// its bin, as a row (its query) and a column (its key), in every thumbnail.
import { byId, fill, h, s } from "../shared/dom.js";
import { sharesImage } from "./ink.js";
import { keptJSON } from "./job.js";

const THUMB = 56; // px per thumbnail

/**
 * Wire the panel. `onOpen(layer, head)` opens a head in the view above.
 * @returns {{load: (jobId: string) => Promise<object>, image: (hd: object) => string,
 *   highlight: (i: number|null) => void, select: (l: number, hd: number) => void}}
 *   load() resolves to the model view (the API's answer); image(hd) is one of its thumbnails' pictures
 */
export function setupModelView(onOpen) {
  const panel = byId("rm-model-view");
  const grid = byId("rm-model-grid");
  let view = null;
  let images = []; // each head's thumbnail as a data URL, painted once per trace

  function thumbnail(hd) {
    const cell = THUMB / view.size;
    return h("button", {
      type: "button", class: "rm-thumb", tabindex: "-1",
      "data-layer": hd.layer, "data-head": hd.head, "aria-pressed": "false",
      "aria-label": hd.title, title: hd.title,
      onclick: () => onOpen(hd.layer, hd.head),
      onkeydown: (event) => move(event, hd),
    },
    s("svg", { class: "rm-thumb-svg", viewBox: `0 0 ${THUMB} ${THUMB}`, width: THUMB, height: THUMB, "aria-hidden": "true" },
      s("image", { x: 0, y: 0, width: THUMB, height: THUMB, href: images[hd.layer * view.n_head + hd.head], preserveAspectRatio: "none" }),
      s("rect", { class: "rm-thumb-row", x: 0, y: 0, width: THUMB, height: cell, visibility: "hidden" }),
      s("rect", { class: "rm-thumb-col", x: 0, y: 0, width: cell, height: THUMB, visibility: "hidden" }),
      s("rect", { class: "rm-mini-frame", x: 0, y: 0, width: THUMB, height: THUMB })),
    h("span", { class: "rm-thumb-label" }, hd.thumb_text));
  }

  // arrow keys move through the grid (one tab stop for the whole grid)
  function move(event, hd) {
    const d = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] }[event.key];
    if (!d) return;
    event.preventDefault();
    const layer = Math.min(view.n_layer - 1, Math.max(0, hd.layer + d[0]));
    const head = Math.min(view.n_head - 1, Math.max(0, hd.head + d[1]));
    const next = grid.querySelector(`[data-layer="${layer}"][data-head="${head}"]`);
    for (const b of grid.querySelectorAll(".rm-thumb")) b.setAttribute("tabindex", b === next ? "0" : "-1");
    next?.focus();
  }

  return {
    async load(jobId) {
      view = await keptJSON(`/api/models/jobs/${encodeURIComponent(jobId)}/model-view`);
      images = view.heads.map((hd) => sharesImage(hd.thumb));
      const rows = [];
      for (let l = 0; l < view.n_layer; l++) {
        const heads = view.heads.slice(l * view.n_head, (l + 1) * view.n_head);
        const name = view.layers[l];
        rows.push(h("div", { class: "rm-model-row", role: "group", "aria-label": name.label },
          h("span", { class: "rm-model-layer", "aria-hidden": "true" }, name.short), heads.map(thumbnail)));
      }
      fill(grid, rows);
      grid.querySelector(".rm-thumb")?.setAttribute("tabindex", "0");
      // the legend: each kind's definition and threshold, then the rule that picks one name
      byId("rm-model-kinds").replaceChildren(
        ...view.kinds.map((d) => h("li", { "data-kind": d.kind }, h("strong", {}, d.name), ": ", d.text)),
        h("li", { class: "rm-model-rule" }, view.rule.text));
      panel.hidden = false;
      return view;
    },
    image(hd) {
      return images[hd.layer * view.n_head + hd.head];
    },
    highlight(i) {
      if (!view) return;
      const r = i === null || i === undefined ? -1 : view.bins.findIndex(([a, b]) => a <= i && i < b);
      const cell = THUMB / view.size;
      for (const rect of grid.querySelectorAll(".rm-thumb-row")) {
        rect.setAttribute("y", String(Math.max(0, r) * cell));
        rect.setAttribute("visibility", r < 0 ? "hidden" : "visible");
      }
      for (const rect of grid.querySelectorAll(".rm-thumb-col")) {
        rect.setAttribute("x", String(Math.max(0, r) * cell));
        rect.setAttribute("visibility", r < 0 ? "hidden" : "visible");
      }
      grid.dataset.highlight = r < 0 ? "" : String(r);
    },
    select(layer, head) {
      for (const b of grid.querySelectorAll(".rm-thumb")) {
        const on = Number(b.dataset.layer) === layer && Number(b.dataset.head) === head;
        b.classList.toggle("is-selected", on);
        b.setAttribute("aria-pressed", on ? "true" : "false");
      }
    },
  };
}
