// Line charts and bar charts, drawn from the server's picture data (lab/connections/pictures.py):
// points and ticks arrive as fractions of the axes (x right, y up), bar lengths as fractions of
// the bar area, every text as a string. This module scales fractions to user units only.

import { s } from "../shared/dom.js";
import { W } from "./heatmap.js";

const L = 46;
const R = 10;
const T = 12;
const B = 34;
const H = 200;

/** A line chart: axes with ticks, each series a polyline with dots, a dashed marker. */
export function drawLines(p) {
  const pw = W - L - R;
  const ph = H - T - B;
  const x = (u) => L + u * pw;
  const y = (v) => T + (1 - v) * ph;
  const nodes = [];
  for (const t of p.y.ticks) {
    nodes.push(s("line", { class: "cx-grid", x1: L, x2: W - R, y1: y(t.at), y2: y(t.at) }));
    nodes.push(s("text", { class: "cx-tick", x: L - 4, y: y(t.at) + 3, "text-anchor": "end" }, t.text));
  }
  for (const t of p.x.ticks) {
    nodes.push(s("text", { class: "cx-tick", x: x(t.at), y: H - B + 13, "text-anchor": "middle" }, t.text));
  }
  nodes.push(s("line", { class: "cx-axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }));
  nodes.push(s("line", { class: "cx-axis", x1: L, x2: L, y1: y(0), y2: y(1) }));
  nodes.push(s("text", { class: "cx-axis-label", x: L + pw / 2, y: H - 4, "text-anchor": "middle" }, p.x.label));
  for (const series of p.series) {
    const pts = series.points.map(([u, v]) => `${x(u)},${y(v)}`).join(" ");
    nodes.push(s("polyline", { class: `cx-line ${series.cls}`, points: pts, "data-series": series.name }));
    if (series.dots) {
      for (const [u, v] of series.points) nodes.push(s("circle", { class: `cx-dot ${series.cls}`, cx: x(u), cy: y(v), r: 2.5 }));
    }
  }
  if (p.marker) {
    nodes.push(s("line", { class: "cx-marker", "data-at": p.marker.at, x1: x(p.marker.at), x2: x(p.marker.at), y1: y(0), y2: y(1) }));
    const anchor = p.marker.at > 0.7 ? "end" : "start";
    nodes.push(s("text", { class: "cx-marker-text", x: x(p.marker.at) + (anchor === "end" ? -4 : 4), y: T + 10, "text-anchor": anchor }, p.marker.text));
  }
  return { height: H, nodes };
}

/** Horizontal bars, a label above each; signed bars grow both ways from a middle line. */
export function drawBars(p) {
  const row = 34;
  const left = 8;
  const width = W - left - 70;
  const zero = p.signed ? left + width / 2 : left;
  const span = p.signed ? width / 2 : width;
  const nodes = [];
  p.bars.forEach((b, i) => {
    const top = 6 + i * row;
    nodes.push(s("text", { class: "cx-bar-label", x: left, y: top + 10 }, b.label));
    const len = Math.max(1, b.length * span);
    const x0 = b.negative ? zero - len : zero;
    const cls = ["cx-bar", b.cls, b.marked ? "is-marked" : ""].filter(Boolean).join(" ");
    nodes.push(s("rect", { class: cls, x: x0, y: top + 14, width: len, height: 12, "data-bar": i }));
    const tx = b.negative ? zero + 4 : x0 + len + 4;
    nodes.push(s("text", { class: "cx-bar-text", x: tx, y: top + 24 }, b.text));
  });
  if (p.signed) nodes.push(s("line", { class: "cx-axis", x1: zero, x2: zero, y1: 2, y2: 6 + p.bars.length * row }));
  return { height: 10 + p.bars.length * row, nodes };
}
