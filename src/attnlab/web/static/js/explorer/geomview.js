// "Inspect key and value geometry": the key plane and the value plane on
// their own (grid of 1 unit, equal axes, amber q, ink keys, teal o, the hull).

import { s } from "../shared/dom.js";
import { drawKeyPlane } from "./match.js";
import { drawValuePlane } from "./mix.js";
import { SIZE } from "../shared/plot.js";

export function mountGeometry(els) {
  els.keys.setAttribute("viewBox", `0 0 ${SIZE} ${SIZE}`);
  const layer = s("g");
  els.keys.append(layer);
  return function draw(result) {
    if (result.geometry.key_view) drawKeyPlane(layer, result, "geo-k", { projections: false });
    drawValuePlane(els.values, result, "geo-v", { arrows: false });
    const kstep = result.geometry.key_view ? result.geometry.key_view.step : 1;
    const vstep = result.geometry.value_view ? result.geometry.value_view.step : 1;
    els.keyNote.textContent = `Key space only. Each grid interval is ${kstep} coordinate unit${kstep === 1 ? "" : "s"} on both axes. Amber marks the query q you control; ink marks the fixed keys.`;
    els.valueNote.textContent = `Value space only. Each grid interval is ${vstep} coordinate unit${vstep === 1 ? "" : "s"} on both axes. Teal marks the mixed output o; the shaded hull of the allowed values bounds its possible positions.`;
  };
}
