// Step 3, Mix: the value plane with the values, the hull of the allowed
// values (the convex hull o can never leave), the carries w·v added tip to tail
// and the output o. All positions come from the server (geometry.arrows,
// geometry.hull, trace.output) and all labels too (display); this module only draws them.

import { fill, s, srcClass } from "../shared/dom.js";
import { arrow, grid, label, offPlot, placeLabels, plane, ring, SIZE } from "../shared/plot.js";

/**
 * Draw the value plane into `svg` for `result`.
 * @param {SVGSVGElement} svg
 * @param {object} result the API answer
 * @param {string} _prefix kept for callers; arrowheads are drawn inline, so no ids are needed
 * @param {{arrows?: boolean}} options arrows: false draws values, hull and o only
 */
export function drawValuePlane(svg, result, _prefix, options = {}) {
  const { trace, geometry, compare, display } = result;
  svg.setAttribute("viewBox", `0 0 ${SIZE} ${SIZE}`);
  if (!geometry.value_view) {
    fill(svg, s("text", { x: 10, y: 30, class: "label" }, display.words.values_2d_only));
    return;
  }
  const p = plane(geometry.value_view);
  const classes = trace.labels.map((_, i) => srcClass(i));
  const off = geometry.value_off || [];
  const offValues = new Set(off.filter((o) => o.kind === "value").map((o) => o.index));
  const oOff = off.some((o) => o.kind === "output");
  const marks = display.off ? display.off.value : { marks: [], note: "" };
  const parts = [grid(p)];
  const labels = [];
  if (geometry.hull && geometry.hull.length >= 2 && geometry.hull.every((pt) => p.has(pt))) {
    const points = geometry.hull.map(([x, y]) => `${p.x(x)},${p.y(y)}`).join(" ");
    parts.push(s("polygon", { class: "hull", points }));
  }
  trace.values.forEach((v, i) => {
    if (offValues.has(i)) return;
    const blocked = !trace.allowed[i];
    parts.push(s("circle", { class: `value ${classes[i]}${blocked ? " blocked" : ""}`, cx: p.x(v[0]), cy: p.y(v[1]), r: 4.5 }));
    labels.push(label(p, v, display.sources[i].value_mark, `${classes[i]}-text`));
  });
  if (options.arrows !== false) {
    // An arrow is drawn only when both its ends are on the plane; the
    // off-plot note says which points are beyond it.
    for (const a of geometry.arrows) {
      if (p.has(a.start) && p.has(a.end)) parts.push(arrow(p, a.start, a.end, classes[a.index], { "stroke-width": 3 }));
    }
  }
  if (compare.active && compare.reference && p.has(compare.reference.output)) {
    parts.push(ring(p, compare.reference.output, "teal"));
  }
  const o = trace.output;
  if (!oOff) {
    parts.push(s("rect", { class: "output", x: p.x(o[0]) - 5, y: p.y(o[1]) - 5, width: 10, height: 10, transform: `rotate(45 ${p.x(o[0])} ${p.y(o[1])})` }));
    labels.unshift(label(p, o, display.output_mark, "teal-text", 9, 16));
  }
  const colour = (item) => (item.kind === "output" ? "teal" : classes[item.index]);
  fill(svg, ...parts, ...offPlot(p, off, marks.marks, marks.note, colour), ...labels);
  placeLabels(svg);
}
