// The lab's pictures: one figure per picture the answer lists, built once per id and redrawn
// in place from each answer (so a moved slider moves the picture without rebuilding the page).
// Each figure is an SVG role="img" named by its title and described by the server's caption. A
// picture the answer no longer lists is taken away.

import { fill, h, s, text } from "../shared/dom.js";
import { drawBars, drawLines } from "./charts.js";
import { W, drawBands, drawHeatmap } from "./heatmap.js";

const DRAW = { heatmap: drawHeatmap, bands: drawBands, lines: drawLines, bars: drawBars };

function legend(p) {
  if (p.kind === "lines") return p.series.map((x) => h("li", { class: x.cls }, x.name));
  return [];
}

/** Mount the pictures in `root`; returns draw(answer). */
export function mountFigures(root) {
  const figures = new Map();
  return function draw(answer) {
    for (const p of answer.pictures) {
      let f = figures.get(p.id);
      if (!f) {
        const id = `cx-pic-${p.id}`;
        f = {
          title: h("h3", { id: `${id}-title` }),
          svg: s("svg", { id, role: "img", "aria-labelledby": `${id}-title`, "aria-describedby": `${id}-cap`, "data-kind": p.kind }),
          legend: h("ul", { class: "cx-legend" }),
          caption: h("figcaption", { id: `${id}-cap` }),
        };
        root.append(h("figure", { class: "cx-figure", "data-picture": p.id }, f.title, f.svg, f.legend, f.caption));
        figures.set(p.id, f);
      }
      const { height, nodes } = DRAW[p.kind](p);
      f.svg.setAttribute("viewBox", `0 0 ${W} ${height}`);
      fill(f.svg, nodes);
      text(f.title, p.title);
      text(f.caption, p.caption);
      fill(f.legend, legend(p));
    }
    // a picture the answer no longer lists (a model part turned off) goes
    const listed = new Set(answer.pictures.map((p) => p.id));
    for (const [id, f] of figures) {
      if (listed.has(id)) continue;
      f.title.parentElement.remove();
      figures.delete(id);
    }
  };
}
