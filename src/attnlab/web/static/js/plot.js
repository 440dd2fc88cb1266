// Drawing helpers for the square, equal-unit planes. The server chooses the
// window (geometry.key_view / value_view: xmin..xmax, ymin..ymax, step); this
// module only maps data coordinates to SVG user units and back.

import { s } from "./dom.js";

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
    x: (x) => PAD + (x - view.xmin) * unit,
    y: (y) => SIZE - PAD - (y - view.ymin) * unit,
    toData: (u, v) => [view.xmin + (u - PAD) / unit, view.ymin + (SIZE - PAD - v) / unit],
  };
}

/** Grid lines every `step`, darker axes through the origin, and end labels. */
export function grid(p) {
  const { xmin, xmax, ymin, ymax, step } = p.view;
  const lines = [];
  const count = Math.round((xmax - xmin) / step);
  for (let i = 0; i <= count; i++) {
    const x = xmin + i * step;
    const y = ymin + i * step;
    lines.push(s("line", { class: x === 0 ? "axis" : "grid", x1: p.x(x), x2: p.x(x), y1: p.y(ymin), y2: p.y(ymax) }));
    lines.push(s("line", { class: y === 0 ? "axis" : "grid", x1: p.x(xmin), x2: p.x(xmax), y1: p.y(y), y2: p.y(y) }));
  }
  const tick = (value) => String(value).replace("-", "−");
  return s(
    "g",
    { class: "grid-layer", "aria-hidden": "true" },
    lines,
    s("text", { class: "tick", x: p.x(xmin), y: SIZE - 6, "text-anchor": "start" }, tick(xmin)),
    s("text", { class: "tick", x: p.x(xmax), y: SIZE - 6, "text-anchor": "end" }, tick(xmax)),
    s("text", { class: "tick", x: 4, y: p.y(ymax) + 4 }, tick(ymax)),
    s("text", { class: "tick", x: 4, y: p.y(ymin) }, tick(ymin)),
  );
}

/** Arrowhead markers, one per class, with ids unique to this plot. */
export function markers(prefix, classes) {
  return s(
    "defs",
    null,
    classes.map((cls) =>
      s(
        "marker",
        { id: `${prefix}-${cls}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        s("path", { class: `head ${cls}`, d: "M0,0 L10,5 L0,10 z" }),
      ),
    ),
  );
}

/** An arrow from a to b (data coordinates) using marker `${prefix}-${cls}`. */
export function arrow(p, a, b, cls, prefix, extra = {}) {
  return s("line", {
    class: `arrow ${cls}`,
    x1: p.x(a[0]),
    y1: p.y(a[1]),
    x2: p.x(b[0]),
    y2: p.y(b[1]),
    "marker-end": `url(#${prefix}-${cls})`,
    ...extra,
  });
}

/**
 * A text label near data point `at`, nudged by (dx, dy) user units. In the
 * right half of the plane it sits to the left of the point, so it stays inside.
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
    },
    content,
  );
}

/** A hollow ring: the reference (q = [2, 1]) marker. */
export function ring(p, at, cls) {
  return s("circle", { class: `ring ${cls}`, cx: p.x(at[0]), cy: p.y(at[1]), r: 8 });
}
