// Step 2, Share: the softmax pie, the strip in source order and the score
// table. Slice boundaries are the server's partial sums (geometry.pie) and
// every label the answer's (display); this module only turns fractions of the
// whole into angles and widths.

import { fill, h, s, srcClass } from "../shared/dom.js";
import { placeLabels } from "../shared/plot.js";
import { textBox } from "../shared/textbox.js";

// The pie sits in the middle of a wider box so small slices can be named
// outside it (in their own colour) without being clipped.
const PIE_W = 240;
const PIE_H = 200;
const R = 74;
const STRIP_W = 320;
const STRIP_H = 44;

function point(fraction, radius) {
  // 0 at twelve o'clock, clockwise, as pies are read.
  const angle = 2 * Math.PI * fraction - Math.PI / 2;
  return [PIE_W / 2 + radius * Math.cos(angle), PIE_H / 2 + radius * Math.sin(angle)];
}

/**
 * Draw the pie for `result` into `svg`. Slices of at least 15% carry their
 * label inside; smaller ones outside, beside the slice; placeLabels() then
 * moves any label that would touch another.
 */
export function drawPie(svg, result) {
  const { display, geometry } = result;
  const parts = [];
  const labels = [];
  for (const slice of geometry.pie) {
    const cls = `slice ${srcClass(slice.index)}`;
    const share = slice.end - slice.start;
    if (share <= 0) continue;
    if (share >= 1) {
      parts.push(s("circle", { class: cls, cx: PIE_W / 2, cy: PIE_H / 2, r: R }));
    } else {
      const [x0, y0] = point(slice.start, R);
      const [x1, y1] = point(slice.end, R);
      const large = share > 0.5 ? 1 : 0;
      parts.push(s("path", { class: cls, d: `M${PIE_W / 2},${PIE_H / 2} L${x0},${y0} A${R},${R} 0 ${large} 1 ${x1},${y1} z` }));
    }
    const mid = (slice.start + slice.end) / 2;
    const content = display.sources[slice.index].share_mark;
    if (share >= 0.15) {
      const [lx, ly] = point(mid, share >= 1 ? 0 : R * 0.6);
      labels.push(s("text", { class: "slice-label", x: lx, y: ly, "text-anchor": "middle", "dominant-baseline": "middle" }, content));
    } else {
      const [ax, ay] = point(mid, R);
      const [lx, ly] = point(mid, R + 8);
      const anchor = lx > PIE_W / 2 + 4 ? "start" : lx < PIE_W / 2 - 4 ? "end" : "middle";
      labels.push(s("text", { class: `label ${srcClass(slice.index)}-text`, x: lx, y: ly, "text-anchor": anchor, "dominant-baseline": "middle", "data-ax": ax, "data-ay": ay }, content));
    }
  }
  svg.setAttribute("viewBox", `0 0 ${PIE_W} ${PIE_H}`);
  fill(svg, ...parts, ...labels);
  placeLabels(svg);
}

/**
 * Draw the shares strip (source order; the whole strip is 1) into `svg`,
 * with the reference's boundaries as dashed lines when the comparison is on.
 * A slice keeps its label only when the label fits inside it.
 */
export function drawStrip(svg, result) {
  const { display, geometry, compare } = result; // compare.active gates the reference lines
  const parts = [];
  const labels = [];
  for (const slice of geometry.pie) {
    const x = slice.start * STRIP_W;
    const w = (slice.end - slice.start) * STRIP_W;
    parts.push(s("rect", { class: `slice ${srcClass(slice.index)}`, x, y: 4, width: Math.max(w, 0), height: STRIP_H - 8 }));
    if (w >= 20) {
      const t = s("text", { class: "slice-label", x: x + w / 2, y: STRIP_H / 2, "text-anchor": "middle", "dominant-baseline": "middle" }, display.sources[slice.index].share_mark);
      t.dataset.room = w - 4;
      labels.push(t);
    }
  }
  if (compare.active && geometry.reference_pie) {
    for (const slice of geometry.reference_pie.slice(0, -1)) {
      const x = slice.end * STRIP_W;
      parts.push(s("line", { class: "ref-line", x1: x, x2: x, y1: 0, y2: STRIP_H }));
    }
  }
  svg.setAttribute("viewBox", `0 0 ${STRIP_W} ${STRIP_H}`);
  fill(svg, ...parts, ...labels);
  // Measure (fonts, no layout: textbox.js), then drop the labels wider than their slice.
  const widths = labels.map((t) => (textBox(t) || { width: 0 }).width);
  labels.forEach((t, i) => {
    if (widths[i] > Number(t.dataset.room)) t.remove();
  });
}

/** The score table: the lab's score header (how the scale was applied) | Share, one row per source. */
export function drawScoreTable(table, result) {
  const { display } = result;
  const words = display.words;
  fill(
    table,
    h("caption", { class: "sr-only" }, words.score_table),
    h(
      "thead",
      null,
      h("tr", null, h("th", { scope: "col" }, words.source), h("th", { scope: "col" }, display.labels.score_header.text), h("th", { scope: "col" }, words.share)),
    ),
    h(
      "tbody",
      null,
      display.sources.map((src) =>
        h(
          "tr",
          null,
          h("th", { scope: "row" }, h("span", { class: `swatch ${srcClass(src.index)}`, "aria-hidden": "true" }), src.label),
          h("td", { class: "num", "data-field": `score-${src.index}` }, src.score),
          h("td", { class: "num", "data-field": `percent-${src.index}` }, src.percent),
        ),
      ),
    ),
  );
}
