// Step 2, Share: the softmax pie, the strip in source order and the score
// table. Slice boundaries are the server's partial sums (geometry.pie);
// this module only turns fractions of the whole into angles and widths.

import { fill, h, s, srcClass } from "./dom.js";

const PIE = 160;
const STRIP_W = 320;
const STRIP_H = 44;

function point(fraction, radius) {
  // 0 at twelve o'clock, clockwise, as pies are read.
  const angle = 2 * Math.PI * fraction - Math.PI / 2;
  return [PIE / 2 + radius * Math.cos(angle), PIE / 2 + radius * Math.sin(angle)];
}

/** Draw the pie for `result` into `svg`. */
export function drawPie(svg, result) {
  const { trace, display, geometry } = result;
  const r = PIE / 2 - 4;
  const parts = [];
  for (const slice of geometry.pie) {
    const cls = `slice ${srcClass(slice.index)}`;
    const share = slice.end - slice.start;
    if (share <= 0) continue;
    if (share >= 1) {
      parts.push(s("circle", { class: cls, cx: PIE / 2, cy: PIE / 2, r }));
    } else {
      const [x0, y0] = point(slice.start, r);
      const [x1, y1] = point(slice.end, r);
      const large = share > 0.5 ? 1 : 0;
      parts.push(s("path", { class: cls, d: `M${PIE / 2},${PIE / 2} L${x0},${y0} A${r},${r} 0 ${large} 1 ${x1},${y1} z` }));
    }
    if (share >= 0.06) {
      const [lx, ly] = point((slice.start + slice.end) / 2, r * 0.62);
      const source = display.sources[slice.index];
      parts.push(s("text", { class: "slice-label", x: lx, y: ly, "text-anchor": "middle", "dominant-baseline": "middle" }, `${trace.labels[slice.index]} ${source.percent}`));
    }
  }
  svg.setAttribute("viewBox", `0 0 ${PIE} ${PIE}`);
  fill(svg, ...parts);
}

/**
 * Draw the shares strip (A, B, C order; the whole strip is 1) into `svg`,
 * with the reference's boundaries as dashed lines when the comparison is on.
 */
export function drawStrip(svg, result) {
  const { trace, display, geometry, compare } = result; // compare.active gates the reference lines
  const parts = [];
  for (const slice of geometry.pie) {
    const x = slice.start * STRIP_W;
    const w = (slice.end - slice.start) * STRIP_W;
    parts.push(s("rect", { class: `slice ${srcClass(slice.index)}`, x, y: 4, width: Math.max(w, 0), height: STRIP_H - 8 }));
    if (w >= 34) {
      parts.push(s("text", { class: "slice-label", x: x + w / 2, y: STRIP_H / 2, "text-anchor": "middle", "dominant-baseline": "middle" }, `${trace.labels[slice.index]} ${display.sources[slice.index].percent}`));
    }
  }
  if (compare.active && geometry.reference_pie) {
    for (const slice of geometry.reference_pie.slice(0, -1)) {
      const x = slice.end * STRIP_W;
      parts.push(s("line", { class: "ref-line", x1: x, x2: x, y1: 0, y2: STRIP_H }));
    }
  }
  svg.setAttribute("viewBox", `0 0 ${STRIP_W} ${STRIP_H}`);
  fill(svg, ...parts);
}

/** The score table: Score q·k / scale | Share, one row per source. */
export function drawScoreTable(table, result) {
  const { display } = result;
  fill(
    table,
    h("caption", { class: "sr-only" }, "Scores and shares by source"),
    h(
      "thead",
      null,
      h("tr", null, h("th", { scope: "col" }, "Source"), h("th", { scope: "col" }, `Score q·k / ${display.scale}`), h("th", { scope: "col" }, "Share")),
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
