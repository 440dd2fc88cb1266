// Step 1, Match: the key plane with the keys, q's projection onto each key and
// the draggable q. Pointer (mouse, pen, touch) anywhere in the plane moves q;
// the focused q handle moves with the arrow keys (Shift: bigger steps, both the
// answer's display.query_steps). The browser only turns pointer positions into q
// coordinates; the projections, the labels and everything else come from the server.

import { fill, s, srcClass } from "../shared/dom.js";
import { mountStrip } from "./strip.js";
import { arrow, grid, insetPlane, label, offPlot, placeLabels, plane, ring, SIZE } from "../shared/plot.js";

/** Round a coordinate to 2 decimals so dragged queries stay readable. */
function tidy(x) {
  return Math.round(x * 100) / 100;
}

/**
 * Draw the key plane into `layer` (an SVG <g>) for `result`.
 * @param {SVGGElement} layer
 * @param {object} result the API answer
 * @param {string} _prefix kept for callers; arrowheads are drawn inline, so no ids are needed
 * @param {{projections?: boolean, inset?: boolean}} options inset: false never draws the zoom inset
 */
export function drawKeyPlane(layer, result, _prefix, options = {}) {
  const { trace, geometry, compare, display } = result;
  const p = plane(geometry.key_view);
  const cls = trace.labels.map((_, i) => srcClass(i));
  const marks = display.off ? display.off.key : { marks: [], note: "" };
  const off = geometry.key_off || [];
  const offKeys = new Set(off.filter((o) => o.kind === "key").map((o) => o.index));
  const qOff = off.some((o) => o.kind === "q");
  const parts = [grid(p)];
  trace.keys.forEach((k, i) => {
    if (offKeys.has(i)) return;
    parts.push(arrow(p, [0, 0], k, "ink"));
    // A dot at each key's tip in its source's colour keeps keys apart when
    // the plane zooms out and they shrink to a few pixels.
    parts.push(s("circle", { class: `dot ${cls[i]}`, cx: p.x(k[0]), cy: p.y(k[1]), r: 3 }));
  });
  if (options.projections !== false && !qOff) {
    geometry.projections.forEach((point, i) => {
      if (!point || !p.has(point)) return;
      // How far q reaches along key i: the segment from 0 to the projection.
      parts.push(s("line", { class: `reach ${cls[i]}`, x1: p.x(0), y1: p.y(0), x2: p.x(point[0]), y2: p.y(point[1]) }));
      parts.push(s("line", { class: "drop", x1: p.x(trace.q[0]), y1: p.y(trace.q[1]), x2: p.x(point[0]), y2: p.y(point[1]) }));
      parts.push(s("circle", { class: `foot ${cls[i]}`, cx: p.x(point[0]), cy: p.y(point[1]), r: 3.5 }));
    });
  }
  if (compare.active && compare.reference) {
    parts.push(ring(p, compare.reference.q, "amber"));
  }
  if (!qOff) {
    parts.push(arrow(p, [0, 0], trace.q, "amber", {}, 11));
    parts.push(label(p, trace.q, display.q_mark, "amber-text", 10, -17));
  }
  // Zoomed far out (a q typed far away), the keys shrink to a few pixels
  // around the origin: an inset repeats them at their own scale, labelled.
  const shown = trace.keys.filter((_, i) => !offKeys.has(i));
  // The largest coordinate (not the length) is enough to tell a shrunk picture.
  const longest = Math.max(0, ...shown.map((k) => Math.max(Math.abs(k[0]), Math.abs(k[1]))));
  const zoom = options.inset !== false && longest > 0 && longest * p.unit < 24 ? keyInset(trace, cls, offKeys, longest, display.words) : null;
  if (zoom) parts.push(zoom.parts);
  // Labels after the marks, q's first so it keeps its place by the handle.
  const labels = trace.keys.map((k, i) => (offKeys.has(i) ? null : label(zoom ? zoom.p : p, k, display.sources[i].key_mark, `ink ${cls[i]}-text`)));
  const colour = (o) => (o.kind === "q" ? "amber" : cls[o.index]);
  fill(layer, ...parts, ...offPlot(p, off, marks.marks, marks.note, colour), ...labels);
  if (layer.ownerSVGElement) placeLabels(layer.ownerSVGElement);
  return p;
}

/**
 * The keys at their own scale in a corner inset (the corner away from q),
 * with a note of the zoom. Returns {p, parts}: the inset's plane for labels.
 */
function keyInset(trace, cls, offKeys, longest, words) {
  const corner = trace.q[0] > 0 && trace.q[1] > 0 ? "bottom-right" : "top-right";
  const p = insetPlane(longest * 1.6, corner);
  const parts = [s("rect", { class: "inset", ...p.box })];
  trace.keys.forEach((k, i) => {
    if (offKeys.has(i)) return;
    parts.push(arrow(p, [0, 0], k, "ink", {}, 6));
    parts.push(s("circle", { class: `dot ${cls[i]}`, cx: p.x(k[0]), cy: p.y(k[1]), r: 2.5 }));
  });
  parts.push(s("text", { class: "tick inset-note", x: p.box.x + p.box.width - 3, y: p.box.y + p.box.height - 4, "text-anchor": "end" }, words.keys_zoomed));
  return { p, parts: s("g", { class: "key-inset" }, parts) };
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

    "aria-describedby": describe,
  });
  svg.append(layer, handle);
  const mini = mountStrip(svg); // the phone strip (shares and output while q is dragged)
  let p = null;
  let q = null;
  let result = null; // the last answer drawn

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
    mini.show(event.clientY);
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
    mini.hide();
    if (svg.hasPointerCapture(event.pointerId)) svg.releasePointerCapture(event.pointerId);
  };
  svg.addEventListener("pointerup", release);
  svg.addEventListener("pointercancel", release);

  handle.addEventListener("keydown", (event) => {
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const move = moves[event.key];
    if (!move || !q) return;
    event.preventDefault();
    const steps = result ? result.display.query_steps : null;
    if (!steps) return;
    const step = event.shiftKey ? steps.big : steps.step;
    // Step from the newest requested q, not the last drawn one, so quick key
    // presses add up even while an answer is on its way.
    const from = getQuery();
    onQuery([tidy(from[0] + move[0] * step), tidy(from[1] + move[1] * step)], mark(event));
  });

  return {
    draw(answer) {
      if (!answer.geometry.key_view) return;
      result = answer;
      p = drawKeyPlane(layer, result, "match");
      q = result.trace.q;
      mini.draw(result);
      // The window in data units, for tests and other views that aim at a point.
      svg.dataset.view = JSON.stringify(result.geometry.key_view);
      // An off-plot q leaves its handle on the edge marker, still focusable.
      const at = p.has(q) ? q : ((result.geometry.key_off || []).find((o) => o.kind === "q") || { edge: [0, 0] }).edge || [0, 0];
      handle.setAttribute("cx", p.x(at[0]));
      handle.setAttribute("cy", p.y(at[1]));
      handle.setAttribute("aria-label", result.display.labels.handle.text);
      handle.setAttribute("aria-roledescription", result.display.words.handle_role);
    },
  };
}
