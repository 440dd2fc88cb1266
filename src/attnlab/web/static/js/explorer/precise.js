// "Inspect precise numbers": every number at full precision (shortest
// round-tripping repr, -0 kept), written by the server.

import { fill, h } from "../shared/dom.js";

export function drawPrecise(el, result) {
  const { display } = result;
  fill(
    el,
    h("li", null, display.precise_q),
    display.sources.map((src) => h("li", { "data-field": `precise-${src.index}` }, src.precise)),
    h("li", null, display.m_z_precise),
    h("li", { "data-field": "precise-output" }, display.precise_output),
  );
}
