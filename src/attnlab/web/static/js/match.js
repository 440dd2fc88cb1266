// Step 1, Match: the key plane with the keys, q's projection onto each key and
// the draggable q. Pointer (mouse, pen, touch) anywhere in the plane moves q;
// the focused q handle moves with the arrow keys (Shift: bigger steps).
// The browser only turns pointer positions into q coordinates; the
// projections and everything else come from the server.

import { fill, s, srcClass } from "./dom.js";
import { arrow, grid, label, markers, plane, ring, SIZE } from "./plot.js";

const STEP = 0.1;
const BIG_STEP = 1;

/** Round a coordinate to 2 decimals so dragged queries stay readable. */
function tidy(x) {
  return Math.round(x * 100) / 100;
}

/**
 * Draw the key plane into `layer` (an SVG <g>) for `result`.
 * @param {SVGGElement} layer
 * @param {object} result the API answer
 * @param {string} prefix unique id prefix for the arrow markers
 * @param {{projections?: boolean}} options
 */
export function drawKeyPlane(layer, result, prefix, options = {}) {
  const { trace, geometry, compare, display } = result;
  const p = plane(geometry.key_view);
  const cls = trace.labels.map((_, i) => srcClass(i));
  const parts = [markers(prefix, ["ink", "amber"]), grid(p)];
  trace.keys.forEach((k, i) => {
    parts.push(arrow(p, [0, 0], k, "ink", prefix));
    parts.push(label(p, k, `k${trace.labels[i]}`, `ink ${cls[i]}-text`));
  });
  if (options.projections !== false) {
    geometry.projections.forEach((point, i) => {
      if (!point) return;
      // How far q reaches along key i: the segment from 0 to the projection.
      parts.push(s("line", { class: `reach ${cls[i]}`, x1: p.x(0), y1: p.y(0), x2: p.x(point[0]), y2: p.y(point[1]) }));
      parts.push(s("line", { class: "drop", x1: p.x(trace.q[0]), y1: p.y(trace.q[1]), x2: p.x(point[0]), y2: p.y(point[1]) }));
      parts.push(s("circle", { class: `foot ${cls[i]}`, cx: p.x(point[0]), cy: p.y(point[1]), r: 3.5 }));
    });
  }
  if (compare.active && compare.reference) {
    parts.push(ring(p, compare.reference.q, "amber"));
  }
  parts.push(arrow(p, [0, 0], trace.q, "amber", prefix));
  parts.push(label(p, trace.q, `q ${display.q}`, "amber-text", 10, -17));
  fill(layer, ...parts);
  return p;
}

/** The interactive Match plot: mount once, then draw(result) on every answer. */
export function mountMatch(svg, { onQuery, getQuery, describe }) {
  svg.setAttribute("viewBox", `0 0 ${SIZE} ${SIZE}`);
  const layer = s("g");
  const handle = s("circle", {
    class: "handle",
    r: 11,
    tabindex: 0,
    role: "button",
    "aria-roledescription": "draggable point",
    "aria-describedby": describe,
  });
  svg.append(layer, handle);
  let p = null;
  let q = null;

  function moveTo(u, v, marks) {
    const [lo, hi] = [p.view.xmin, p.view.xmax];
    const [blo, bhi] = [p.view.ymin, p.view.ymax];
    const [x, y] = p.toData(u, v);
    const next = [tidy(Math.min(hi, Math.max(lo, x))), tidy(Math.min(bhi, Math.max(blo, y)))];
    onQuery(next, marks);
  }

  function fromEvent(event) {
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
    return [point.x, point.y];
  }

  // Each move is timed from its input event's timestamp (when the browser got
  // it), so any wait before the handler runs counts as latency too.
  let markCount = 0;
  function mark(event) {
    const name = `attnlab:move-${++markCount}`;
    performance.mark(name, { startTime: Math.min(event.timeStamp, performance.now()) });
    return [name];
  }

  svg.addEventListener("pointerdown", (event) => {
    if (!p || event.button > 0) return;
    svg.setPointerCapture(event.pointerId);
    handle.focus({ preventScroll: true });
    moveTo(...fromEvent(event), mark(event));
    event.preventDefault();
  });
  // Chrome holds pointermove back until the next animation frame (up to one
  // frame late); pointerrawupdate fires as soon as the input arrives (secure
  // contexts only, and a page served from 127.0.0.1 is one), so the request leaves earlier
  // and its answer can make the very next frame. Where it is missing, or for a
  // pointer that never sends it, pointermove does the same job. Either way
  // state.js keeps one request in flight and the newest q wins.
  const raw = new Set(); // pointers that send pointerrawupdate
  const drag = (event) => {
    if (!p || !svg.hasPointerCapture(event.pointerId)) return;
    moveTo(...fromEvent(event), mark(event));
  };
  if ("onpointerrawupdate" in window) {
    svg.addEventListener("pointerrawupdate", (event) => {
      raw.add(event.pointerId);
      drag(event);
    });
  }
  svg.addEventListener("pointermove", (event) => {
    if (!raw.has(event.pointerId)) drag(event);
  });
  const release = (event) => {
    raw.delete(event.pointerId);
    if (svg.hasPointerCapture(event.pointerId)) svg.releasePointerCapture(event.pointerId);
  };
  svg.addEventListener("pointerup", release);
  svg.addEventListener("pointercancel", release);

  handle.addEventListener("keydown", (event) => {
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const move = moves[event.key];
    if (!move || !q) return;
    event.preventDefault();
    const step = event.shiftKey ? BIG_STEP : STEP;
    // Step from the newest requested q, not the last drawn one, so quick key
    // presses add up even while an answer is on its way.
    const from = getQuery();
    onQuery([tidy(from[0] + move[0] * step), tidy(from[1] + move[1] * step)], mark(event));
  });

  return {
    draw(result) {
      if (!result.geometry.key_view) return;
      p = drawKeyPlane(layer, result, "match");
      q = result.trace.q;
      // The window in data units, for tests and other views that aim at a point.
      svg.dataset.view = JSON.stringify(result.geometry.key_view);
      handle.setAttribute("cx", p.x(q[0]));
      handle.setAttribute("cy", p.y(q[1]));
      handle.setAttribute(
        "aria-label",
        `Query q at ${result.display.q}. Arrow keys move it by ${STEP}, with Shift by ${BIG_STEP}.`,
      );
    },
  };
}
