// Heatmaps and bands, drawn from the server's picture data (lab/connections/pictures.py).
// Every position arrives as a fraction and every label as a string; this module only scales
// fractions to the SVG's user units. Contract: the SVG is W user units wide; rows go down.

import { s } from "../shared/dom.js";

export const W = 360;
const LEFT = 58; // room for row labels
const TOP = 30; // room for column labels

/** A heatmap: one cell per value, ink = fill (0..1), grey where blocked, marks outlined. */
export function drawHeatmap(p) {
  const nr = p.rows.length;
  const nc = p.cols.length;
  const cw = (W - LEFT - 4) / nc;
  const ch = Math.min(cw, nr === 1 ? 40 : 24, 240 / nr);
  const height = TOP + nr * ch + 6;
  const nodes = [];
  for (let i = 0; i < nr; i++) {
    for (let j = 0; j < nc; j++) {
      const x = LEFT + j * cw;
      const y = TOP + i * ch;
      const blocked = p.blocked && p.blocked[i][j];
      nodes.push(s("rect", { class: blocked ? "cx-cell-bg is-blocked" : "cx-cell-bg", x, y, width: cw, height: ch }));
      if (!blocked && p.fill[i][j] > 0) {
        const neg = p.sign && p.sign[i][j] < 0;
        nodes.push(s("rect", { class: neg ? "cx-cell neg" : "cx-cell", x, y, width: cw, height: ch, "fill-opacity": p.fill[i][j] }));
      }
      if (p.text && p.text[i][j]) {
        nodes.push(s("text", { class: "cx-cell-text", x: x + cw / 2, y: y + ch / 2 + 3, "text-anchor": "middle" }, p.text[i][j]));
      }
    }
  }
  const labels = [];
  for (let i = 0; i < nr; i += p.label_every) {
    labels.push(s("text", { class: "cx-label", x: LEFT - 4, y: TOP + (i + 0.5) * ch + 3, "text-anchor": "end" }, p.rows[i]));
  }
  for (let j = 0; j < nc; j += p.label_every) {
    labels.push(s("text", { class: "cx-label", x: LEFT + (j + 0.5) * cw, y: TOP - 6, "text-anchor": "middle" }, p.cols[j]));
  }
  const marks = p.marks.map((m) => {
    const [r0, r1] = m.kind === "row" ? [m.start, m.stop] : m.rows || [0, nr];
    const [c0, c1] = m.kind === "row" ? [0, nc] : [m.start, m.stop];
    return s("rect", { class: "cx-mark", "data-mark": `${m.kind} ${m.start}`, x: LEFT + c0 * cw, y: TOP + r0 * ch, width: (c1 - c0) * cw, height: (r1 - r0) * ch });
  });
  return { height, nodes: [...nodes, ...labels, ...marks] };
}

/** Bands: each row's seen interval over its reference interval, the chosen row outlined. */
export function drawBands(p) {
  const plotW = W - LEFT - 4;
  const rh = Math.max(1, Math.min(12, 240 / p.rows));
  const height = TOP + p.rows * rh + 6;
  const nodes = [];
  p.reference.forEach(([a, b], i) => {
    nodes.push(s("rect", { class: "cx-band-ref", x: LEFT + a * plotW, y: TOP + i * rh, width: (b - a) * plotW, height: rh }));
  });
  p.seen.forEach(([a, b], i) => {
    nodes.push(s("rect", { class: "cx-band", x: LEFT + a * plotW, y: TOP + i * rh, width: (b - a) * plotW, height: rh }));
  });
  if (p.row !== null) {
    const [a, b] = p.reference[p.row];
    nodes.push(s("rect", { class: "cx-band-row", "data-row": p.row, x: LEFT + a * plotW - 1, y: TOP + p.row * rh - 1, width: (b - a) * plotW + 2, height: rh + 2 }));
  }
  nodes.push(s("text", { class: "cx-axis-label", x: LEFT, y: TOP - 8 }, `${p.cols_label} →`));
  nodes.push(s("text", { class: "cx-axis-label", x: LEFT - 6, y: TOP + 10, "text-anchor": "end" }, `${p.rows_label} ↓`));
  return { height, nodes };
}
