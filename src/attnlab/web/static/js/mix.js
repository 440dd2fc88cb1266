// Step 3, Mix: the value plane with the values, the hull of the allowed
// values (the triangle o can never leave), the carries w·v added tip to tail
// and the output o. All positions come from the server (geometry.arrows,
// geometry.hull, trace.output); this module only draws them.

import { fill, s, srcClass } from "./dom.js";
import { arrow, grid, label, markers, plane, ring, SIZE } from "./plot.js";

/**
 * Draw the value plane into `svg` for `result`.
 * @param {SVGSVGElement} svg
 * @param {object} result the API answer
 * @param {string} prefix unique id prefix for the arrow markers
 * @param {{arrows?: boolean}} options arrows: false draws values, hull and o only
 */
export function drawValuePlane(svg, result, prefix, options = {}) {
  const { trace, geometry, compare, display } = result;
  svg.setAttribute("viewBox", `0 0 ${SIZE} ${SIZE}`);
  if (!geometry.value_view) {
    fill(svg, s("text", { x: 10, y: 30, class: "label" }, "The value plane draws 2-D values only."));
    return;
  }
  const p = plane(geometry.value_view);
  const classes = trace.labels.map((_, i) => srcClass(i));
  const parts = [markers(prefix, classes), grid(p)];
  if (geometry.hull && geometry.hull.length >= 2) {
    const points = geometry.hull.map(([x, y]) => `${p.x(x)},${p.y(y)}`).join(" ");
    parts.push(s("polygon", { class: "hull", points }));
  }
  trace.values.forEach((v, i) => {
    const blocked = !trace.allowed[i];
    parts.push(s("circle", { class: `value ${classes[i]}${blocked ? " blocked" : ""}`, cx: p.x(v[0]), cy: p.y(v[1]), r: 4.5 }));
    parts.push(label(p, v, `v${trace.labels[i]}${blocked ? " (blocked)" : ""}`, `${classes[i]}-text`));
  });
  if (options.arrows !== false) {
    for (const a of geometry.arrows) {
      parts.push(arrow(p, a.start, a.end, classes[a.index], prefix, { "stroke-width": 3 }));
    }
  }
  if (compare.active && compare.reference) {
    parts.push(ring(p, compare.reference.output, "teal"));
  }
  const o = trace.output;
  parts.push(s("rect", { class: "output", x: p.x(o[0]) - 5, y: p.y(o[1]) - 5, width: 10, height: 10, transform: `rotate(45 ${p.x(o[0])} ${p.y(o[1])})` }));
  parts.push(label(p, o, `o ${display.output}`, "teal-text", 9, 16));
  fill(svg, ...parts);
}
