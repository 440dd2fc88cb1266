// Drawing helpers for the square, equal-unit planes. The server chooses the
// window (geometry.key_view / value_view: xmin..xmax, ymin..ymax, step) and
// the off-plot markers (geometry.key_off / value_off); this module only maps
// data coordinates to SVG user units and back, and lays out text.
//
// Label placement is done here, not in Python: it is layout of text boxes
// whose sizes only the browser knows (font metrics), not maths of attention.

import { s } from "./dom.js";
import { markBox, textBox } from "./textbox.js";

export const SIZE = 320; // viewBox width and height, in SVG user units
const PAD = 22;

/**
 * A plane for `view`. Contract: x(data) and y(data) give SVG user units
 * (y grows downward on screen, upward in data); toData(u, v) inverts them.
 * @param {{xmin:number,xmax:number,ymin:number,ymax:number,step:number}} view
 */
export function plane(view) {
  const unit = (SIZE - 2 * PAD) / (view.xmax - view.xmin);
  return {
    view,
    unit,
    x: (x) => PAD + (x - view.xmin) * unit,
    y: (y) => SIZE - PAD - (y - view.ymin) * unit,
    toData: (u, v) => [view.xmin + (u - PAD) / unit, view.ymin + (SIZE - PAD - v) / unit],
    has: (pt) => pt[0] >= view.xmin && pt[0] <= view.xmax && pt[1] >= view.ymin && pt[1] <= view.ymax,
  };
}

/**
 * Grid lines every `step`, darker axes through the origin, and the numbered
 * lines the server chose (view.ticks: x numbers under the plane, y numbers
 * inside its left edge).
 */
export function grid(p) {
  const { xmin, xmax, ymin, step, ticks } = p.view;
  const lines = [];
  const count = Math.round((xmax - xmin) / step);
  for (let i = 0; i <= count; i++) {
    const x = xmin + i * step;
    const y = ymin + i * step;
    lines.push(s("line", { class: x === 0 ? "axis" : "grid", x1: p.x(x), x2: p.x(x), y1: p.y(ymin), y2: p.y(ymin + count * step) }));
    lines.push(s("line", { class: y === 0 ? "axis" : "grid", x1: p.x(xmin), x2: p.x(xmin + count * step), y1: p.y(y), y2: p.y(y) }));
  }
  const right = xmin + count * step;
  const numbers = [
    ...ticks.x.map((t) => {
      const anchor = t.at === xmin ? "start" : t.at === right ? "end" : "middle";
      return s("text", { class: "tick", x: p.x(t.at), y: SIZE - 5, "text-anchor": anchor }, t.text);
    }),
    ...ticks.y.map((t) => s("text", { class: "tick", x: p.x(xmin) + 2, y: p.y(t.at) - 2, "text-anchor": "start" }, t.text)),
  ];
  return s("g", { class: "grid-layer", "aria-hidden": "true" }, lines, numbers);
}

/**
 * An arrow from a to b (data coordinates): a line and a head drawn as a
 * triangle whose size follows the arrow (at most `head` user units, at most
 * 40% of the arrow), so short arrows keep their shaft and never turn into a blob.
 */
export function arrow(p, a, b, cls, extra = {}, head = 9) {
  const [x1, y1, x2, y2] = [p.x(a[0]), p.y(a[1]), p.x(b[0]), p.y(b[1])];
  const len = Math.hypot(x2 - x1, y2 - y1);
  if (!(len > 0.5)) return s("circle", { class: `head ${cls}`, cx: x2, cy: y2, r: 1.5 });
  const size = Math.min(head, 0.4 * len);
  const [ux, uy] = [(x2 - x1) / len, (y2 - y1) / len];
  const [bx, by] = [x2 - ux * size, y2 - uy * size];
  const w = size * 0.5;
  return s(
    "g",
    { class: "arrow-group" },
    s("line", { class: `arrow ${cls}`, x1, y1, x2: bx, y2: by, ...extra }),
    s("path", { class: `head ${cls}`, d: `M${x2},${y2} L${bx - uy * w},${by + ux * w} L${bx + uy * w},${by - ux * w} z` }),
  );
}

/**
 * A text label near data point `at`, nudged by (dx, dy) user units. In the
 * right half of the plane it sits to the left of the point, so it stays
 * inside. placeLabels() later moves it off other labels; data-ax/ay keep
 * the point it names, for a leader line when it has to move far.
 */
export function label(p, at, content, cls = "", dx = 6, dy = -6) {
  const right = at[0] > (p.view.xmin + p.view.xmax) / 2;
  return s(
    "text",
    {
      class: `label ${cls}`,
      x: p.x(at[0]) + (right ? -dx : dx),
      y: p.y(at[1]) + dy,
      "text-anchor": right ? "end" : "start",
      "data-ax": p.x(at[0]),
      "data-ay": p.y(at[1]),
    },
    content,
  );
}

/** A hollow ring: the reference (q = [2, 1]) marker. */
export function ring(p, at, cls) {
  return s("circle", { class: `ring ${cls}`, cx: p.x(at[0]), cy: p.y(at[1]), r: 8 });
}

/**
 * Off-plot markers: for each point the plane cannot hold (the server's
 * geometry.*_off), an arrow from the origin to the edge where the point
 * lies beyond, its label (`marks[i]`, "kB →") and the plane's `note` under its
 * top edge ("Off this plane: q, kB (see numbers)"); both are the answer's
 * (display.off). `cls(item)` gives an item's colour class.
 */
export function offPlot(p, items, marks, note, cls) {
  if (!items || !items.length) return [];
  const parts = [];
  items.forEach((item, i) => {
    if (!item.edge) return;
    parts.push(arrow(p, [0, 0], item.edge, `off ${cls(item)}`, { "stroke-dasharray": "4 3" }));
    parts.push(label(p, item.edge, marks[i], `${cls(item)}-text`, 4, 14));
  });
  parts.push(s("text", { class: "label off-note", x: SIZE / 2, y: PAD - 6, "text-anchor": "middle" }, note));
  return parts;
}

function overlap(a, b) {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

// Candidate moves in order of preference: stay, then rings of growing size
// up, down, sideways and diagonally. Deterministic, so a state draws the same.
const DIRECTIONS = [[0, -1], [0, 1], [1, 0], [-1, 0], [1, -1], [-1, -1], [1, 1], [-1, 1]];

/**
 * Move the labels of `svg` (already in the document) so no two text boxes
 * overlap and each stays inside the viewBox. Texts with class "tick" stay
 * put and are avoided; other texts are placed in document order, each at the
 * first candidate spot that touches no text and covers no point or arrow (else the
 * one with least overlap, text overlap weighing far more). A label moved
 * far from its point gets a thin leader line back to it. In a closed
 * disclosure never opened nothing is measured yet (textbox.js) and nothing moves.
 * `options.grow`: when no spot is free, grow the viewBox downwards by a row
 * (for strips such as the score axis, whose height may follow its labels).
 * @param {SVGSVGElement} svg
 * @param {{grow?: boolean}} options
 */
export function placeLabels(svg, options = {}) {
  const vb = svg.viewBox.baseVal;
  const texts = [...svg.querySelectorAll("text")];
  // Boxes from fonts and attributes (textbox.js), not getBBox: no forced layout per frame.
  // A null box is a text not rendered yet: it is left where it is.
  const boxes = texts.map((t) => textBox(t) || { x: 0, y: 0, width: 0, height: 0 });
  // Points (values, key tips, feet, o, q's handle) and arrows are soft obstacles: a label
  // avoids covering one when it can, but never at the price of touching text.
  const marks = [...svg.querySelectorAll("circle, rect.output")].map(markBox);
  // Arrows and reach segments too, as small boxes every 6 units along them.
  for (const line of svg.querySelectorAll("line.arrow, line.reach")) {
    const [x1, y1, x2, y2] = ["x1", "y1", "x2", "y2"].map((a) => Number(line.getAttribute(a)));
    const n = Math.min(60, Math.ceil(Math.hypot(x2 - x1, y2 - y1) / 6));
    for (let k = 0; k <= n; k++) {
      const t = n ? k / n : 0;
      marks.push({ x: x1 + t * (x2 - x1) - 1.5, y: y1 + t * (y2 - y1) - 1.5, width: 3, height: 3 });
    }
  }
  const placed = [];
  const moves = [];
  // Keep a box inside the viewBox: the shift (dx, dy) that clamps it there.
  const clamp = (b) => {
    if (!vb || !vb.width) return [0, 0];
    const dx = Math.min(Math.max(0, vb.x + 1 - b.x), vb.x + vb.width - 1 - (b.x + b.width));
    const dy = Math.min(Math.max(0, vb.y + 1 - b.y), vb.y + vb.height - 1 - (b.y + b.height));
    return [dx, dy];
  };
  texts.forEach((t, i) => {
    if (!t.classList.contains("tick") || !(boxes[i].width > 0)) return;
    const [dx, dy] = clamp(boxes[i]);
    placed.push({ x: boxes[i].x + dx, y: boxes[i].y + dy, width: boxes[i].width, height: boxes[i].height });
    if (dx || dy) moves.push([t, dx, dy, boxes[i]]);
  });
  texts.forEach((t, i) => {
    const b = boxes[i];
    if (t.classList.contains("tick") || !(b.width > 0)) return;
    const pad = 1;
    const box = (dx, dy) => ({ x: b.x + dx - pad, y: b.y + dy - pad, width: b.width + 2 * pad, height: b.height + 2 * pad });
    const inBounds = (r) => !vb || vb.width === 0 || (r.x >= vb.x && r.y >= vb.y && r.x + r.width <= vb.x + vb.width && r.y + r.height <= vb.y + vb.height);
    // Clamp into the viewBox first, then search around that spot.
    const [cx, cy] = clamp(b);
    const stepY = b.height * 0.6 + 1;
    const stepX = Math.max(8, b.width * 0.35);
    let best = null;
    let bestCost = Infinity;
    const tryAt = (dx, dy) => {
      const r = box(cx + dx, cy + dy);
      if (!inBounds(r)) return false;
      const cost = 1000 * placed.reduce((sum, o) => sum + overlap(r, o), 0) + marks.reduce((sum, o) => sum + overlap(r, o), 0);
      if (cost < bestCost) {
        best = [cx + dx, cy + dy];
        bestCost = cost;
      }
      return cost === 0;
    };
    if (!tryAt(0, 0)) {
      search: for (let k = 1; k <= 14; k++) {
        for (const [ax, ay] of DIRECTIONS) {
          if (tryAt(ax * k * stepX, ay * k * stepY)) break search;
        }
      }
    }
    let [dx, dy] = best || [cx, cy];
    if (bestCost > 0 && options.grow && vb && vb.height) {
      // No free spot: open a new row under everything drawn so far.
      const bottom = Math.max(vb.y + vb.height, ...placed.map((r) => r.y + r.height));
      dx = cx;
      dy = bottom + 2 - b.y;
      vb.height = bottom + b.height + 4 - vb.y;
    }
    placed.push(box(dx, dy));
    if (dx || dy) moves.push([t, dx, dy, b]);
  });
  for (const [t, dx, dy, b] of moves) {
    t.setAttribute("x", Number(t.getAttribute("x")) + dx);
    t.setAttribute("y", Number(t.getAttribute("y")) + dy);
    const ax = Number(t.dataset.ax);
    const ay = Number(t.dataset.ay);
    if (Number.isFinite(ax) && Number.isFinite(ay) && Math.hypot(dx, dy) > 14) {
      // A leader from the point to the nearest spot of the moved label's box.
      const lx = Math.min(Math.max(ax, b.x + dx), b.x + dx + b.width);
      const ly = Math.min(Math.max(ay, b.y + dy), b.y + dy + b.height);
      t.before(s("line", { class: "leader", x1: ax, y1: ay, x2: lx, y2: ly }));
    }
  }
}

const INSET = 110; // the zoom inset's side, in user units

/**
 * A small square "plane" in a corner of the big one, centred on the origin
 * and spanning ±half data units: same contract as plane() (x, y, has, view).
 * `corner` is "top-right" or "bottom-right" (the left edge holds the y ticks).
 */
export function insetPlane(half, corner) {
  const x0 = SIZE - PAD - INSET - 2;
  const y0 = corner === "top-right" ? PAD + 2 : SIZE - PAD - INSET - 2;
  const unit = INSET / (2 * half);
  const view = { xmin: -half, xmax: half, ymin: -half, ymax: half, step: half };
  return {
    view,
    unit,
    box: { x: x0, y: y0, width: INSET, height: INSET },
    x: (x) => x0 + INSET / 2 + x * unit,
    y: (y) => y0 + INSET / 2 - y * unit,
    has: (pt) => Math.abs(pt[0]) <= half && Math.abs(pt[1]) <= half,
  };
}
