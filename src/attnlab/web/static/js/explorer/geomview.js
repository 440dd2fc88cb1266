// "Inspect key and value geometry": the key plane and the value plane on
// their own (grid of 1 unit, equal axes, amber q, ink keys, teal o, the hull),
// each captioned with the lab's note on its grid (display.labels.*_grid).

import { s, text } from "../shared/dom.js";
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
    text(els.keyNote, result.display.labels.key_grid.text);
    text(els.valueNote, result.display.labels.value_grid.text);
  };
}
