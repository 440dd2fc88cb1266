// The Real model view's pictures of one head: the token buttons, the heatmap
// and the lines. Every number comes from the API (/api/models/jobs/{id}/heads/L/H:
// weights, null where blocked, and their display strings) and every word too
// (a token's label, its short form and its exact text; a cell's readout as the
// head's templates, filled with the head's own strings); this module only maps
// a share in [0, 1] to ink.
import { fill, h, s } from "../shared/dom.js";
import { ink, labelEvery, sharesImage } from "./ink.js";
import { fillIn } from "./words.js";

const RECTS_UP_TO = 64; // tokens drawn cell by cell (with a title each); longer texts as one image
const LINES_ALL_UP_TO = 64; // longer texts: without a focused query, each query's strongest line only

const images = new WeakMap(); // head answer -> its cells' picture: a hover redraws without repainting

const CELL_MAX = 26; // px per heatmap cell, shrunk for long texts
const LABEL_W = 96; // room for the query labels on the left
const LABEL_H = 90; // room for the key labels on top (rotated)

/**
 * A token's label on a picture's axis: its short form, with its exact text as the tooltip of a
 * group around it (a <title> inside the <text> would be part of its text).
 * @param {{short: string, exact: string}} token
 */
function axisLabel(attrs, token) {
  return s("g", { class: "rm-axis-label" }, s("title", {}, token.exact), s("text", attrs, token.short));
}

/**
 * What one cell says (its <title>, and the tooltip's line): the head's template, filled with the
 * tokens' labels and the cell's printed share (at full precision too where the head sent it).
 * @param {object} head the API's head answer: cells (templates), shares, precise (or null), weights
 * @param {{label: string}[]} tokens
 */
export function cellWords(head, tokens, i, j) {
  const slots = { query: tokens[i].label, key: tokens[j].label };
  if (head.weights[i][j] === null) return fillIn(head.cells.blocked, slots);
  slots.share = head.shares[i][j];
  if (!head.precise) return fillIn(head.cells.share, slots);
  return fillIn(head.cells.exact, { ...slots, exact: head.precise[i][j] });
}

/**
 * Draw the query-token buttons (a roving-tabindex toolbar); each says its exact text on hover.
 * @param {HTMLElement} box
 * @param {{tokens: {label: string, exact: string}[], focus: number|null, onFocus: (i: number) => void}} opts
 */
export function drawTokens(box, { tokens, focus, onFocus }) {
  const current = focus ?? 0;
  const last = tokens.length - 1;
  const buttons = tokens.map(({ label, exact }, i) =>
    h(
      "button",
      {
        type: "button",
        class: ["rm-token", i === focus && "is-focus"],
        "data-index": i,
        title: exact,
        "aria-pressed": i === focus ? "true" : "false",
        tabindex: i === current ? "0" : "-1",
        onmouseenter: () => onFocus(i),
        onfocus: () => onFocus(i),
        onclick: () => onFocus(i),
        onkeydown: (event) => {
          const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
          const jump = { Home: 0, End: last }[event.key];
          if (step === undefined && jump === undefined) return;
          event.preventDefault();
          const next = jump ?? Math.min(last, Math.max(0, i + step));
          box.querySelector(`[data-index="${next}"]`)?.focus();
        },
      },
      label,
    ),
  );
  fill(box, buttons);
}

/** Mark the focused token without rebuilding the buttons (keeps keyboard focus). */
export function markToken(box, focus) {
  for (const b of box.querySelectorAll(".rm-token")) {
    const on = Number(b.dataset.index) === focus;
    b.classList.toggle("is-focus", on);
    b.setAttribute("aria-pressed", on ? "true" : "false");
    b.setAttribute("tabindex", on ? "0" : "-1");
  }
}

/**
 * The px per cell (at most CELL_MAX, fractional below 1 for long texts: the cells are then one
 * image) at which `n` cells and the labels fit the width of the heatmap's box (.rm-pictures),
 * so the "fit" heatmap never draws larger than its box; about 520 px of cells where it is wider.
 */
function fitCell(svg, n) {
  const box = svg.closest(".rm-pictures");
  const room = box && box.clientWidth > 0 ? box.clientWidth - 2 : Infinity; // 2: the svg's border
  return Math.min(CELL_MAX, Math.floor((Math.min(520, room - LABEL_W - 40) / n) * 100) / 100);
}

/**
 * Draw one head's weights as a grid: row = query, column = key.
 * @param {SVGSVGElement} svg
 * @param {{tokens: object[], head: object, focus: number|null, zoom: number}} opts
 *   head.weights[i][j] (API floats, null where blocked), head.shares[i][j] (API strings, "" where blocked),
 *   head.caption (the picture's label); tokens: the trace's {label, short, exact}.
 * @returns {object} the grid drawn (for the cell readout): {tokens, head, cell, x0, y0, width, focus}
 */
export function drawHeatmap(svg, { tokens, head, focus, zoom = 0 }) {
  const n = tokens.length;
  // zoom: px per cell the learner picked (0 = fit: about 520 px of cells, less where the box is narrower)
  const cell = zoom > 0 ? zoom : fitCell(svg, n);
  const width = LABEL_W + n * cell + 40; // room for the last key label, rotated
  const height = LABEL_H + n * cell + 4;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("aria-label", head.caption);
  const showText = cell >= 16;
  const labelled = labelEvery(cell, focus); // thinned labels for long texts, the focused one always
  const parts = [];
  for (let j = 0; j < n; j++) {
    if (!labelled(j)) continue;
    const x = LABEL_W + j * cell + cell / 2;
    parts.push(
      axisLabel({ class: "rm-key-label", x, y: LABEL_H - 4, transform: `rotate(-60 ${x} ${LABEL_H - 4})` },
        tokens[j]),
    );
  }
  for (let i = 0; i < n; i++) {
    const y = LABEL_H + i * cell;
    if (labelled(i)) parts.push(
      axisLabel({ class: ["rm-query-label", i === focus && "is-focus"], x: LABEL_W - 6, y: y + cell * 0.7 },
        tokens[i]),
    );
    for (let j = 0; n <= RECTS_UP_TO && j < n; j++) {
      const w = head.weights[i][j];
      const x = LABEL_W + j * cell;
      const ok = w !== null;
      parts.push(
        s("rect", {
          class: ["rm-cell", !ok && "is-blocked"],
          x, y, width: cell - 1, height: cell - 1,
          "fill-opacity": ok ? String(ink(w)) : "1",
          "data-q": i, "data-k": j, "data-weight": String(w),
        },
        s("title", {}, cellWords(head, tokens, i, j))),
      );
      if (showText && ok && w >= 0.1) {
        parts.push(s("text", { class: ["rm-cell-text", w > 0.55 && "is-dark"], x: x + cell / 2, y: y + cell * 0.68 },
          head.cells.text[head.shares[i][j]]));
      }
    }
  }
  if (n > RECTS_UP_TO) {
    // 65,000 SVG rects would take seconds to draw: one pixel per cell, scaled up without smoothing
    parts.push(s("image", {
      class: "rm-cells-image", x: LABEL_W, y: LABEL_H, width: n * cell, height: n * cell,
      href: imageOf(head), preserveAspectRatio: "none", "data-n": n,
    }));
  }
  if (focus !== null && focus !== undefined) {
    // one outline around the focused row, so its cells keep their colours
    parts.push(s("rect", {
      class: "rm-focus-row", x: LABEL_W - 1, y: LABEL_H + focus * cell - 1, width: n * cell + 1, height: cell + 1,
    }));
  }
  fill(svg, parts);
  return { tokens, head, cell, x0: LABEL_W, y0: LABEL_H, width, focus };
}

function imageOf(head) {
  if (!images.has(head)) images.set(head, sharesImage(head.weights));
  return images.get(head);
}

/**
 * Draw lines from queries (left column) to keys (right column), ink = share.
 * With a focused query only its lines are drawn. Above LINES_ALL_UP_TO tokens and
 * without a focus, each query's strongest key only (tens of thousands of lines
 * would take seconds and draw a grey blur); the caption says so. The picture's label is the
 * head's `lines_label`.
 */
export function drawLines(svg, { tokens, head, focus }) {
  const n = tokens.length;
  const row = Math.max(9, Math.min(20, Math.floor(560 / n)));
  const width = 360;
  const height = n * row + 12;
  const left = 110;
  const right = width - 110;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("aria-label", head.lines_label);
  const y = (i) => 6 + i * row + row / 2;
  const lines = [];
  const focused = focus !== null && focus !== undefined;
  const strongestOnly = !focused && n > LINES_ALL_UP_TO;
  svg.dataset.strongestOnly = String(strongestOnly);
  for (let i = 0; i < n; i++) {
    if (focused && i !== focus) continue;
    const row = head.weights[i];
    const top = strongestOnly ? strongest(row) : -1;
    for (let j = 0; j < n; j++) {
      const w = row[j];
      if (w === null || w < 0.01 || (strongestOnly && j !== top)) continue;
      lines.push(s("line", {
        class: "rm-line", x1: left, y1: y(i), x2: right, y2: y(j),
        "stroke-opacity": String(Math.min(1, 0.15 + w)), "stroke-width": String(0.5 + 5 * w),
        "data-q": i, "data-k": j,
      }));
    }
  }
  const text = tokens.map((token, i) => [
    axisLabel({ class: ["rm-line-label", "is-left", i === focus && "is-focus"], x: left - 6, y: y(i) + 4 }, token),
    axisLabel({ class: "rm-line-label", x: right + 6, y: y(i) + 4 }, token),
  ]);
  fill(svg, lines, text);
}

/** The key with the largest share in a row (the server's numbers, compared; ties: the earlier key). */
function strongest(row) {
  let best = -1;
  for (let j = 0; j < row.length; j++) if (row[j] !== null && (best < 0 || row[j] > row[best])) best = j;
  return best;
}
