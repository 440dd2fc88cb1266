// A grid of numbers as coloured cells (layers × heads, layers × tokens): the census map, a
// patching sweep, the logit attribution. The server sends every value, the text each cell
// shows and its hover words (lab/circuits/heatmap.py); this maps a value to a colour:
// "share" grids with the Real model view's ink (darker = larger, square root), "signed"
// grids blue above 0 and red below, full at ±limit. The picture is keyboard operable: with
// the figure focused the arrow keys move a cell cursor, whose words a live line reads out;
// Enter (or a click) picks the cell. A grid whose cells have programs (`hows`) marks each cell as
// a number (numbers.js) and sends "ci-pick" from the cell picked, for "How is this computed?".
import { fill, h, s, text } from "../shared/dom.js";
import { ink } from "../realmodel/ink.js";
import { markNumber } from "./place.js";

const BLUE = "#2450c9"; // --src-0
const RED = "#b3261e"; // --bad
const ROW_LABELS = 44; // px left of the cells
const ROTATED_LABELS = 78; // px above the cells when columns are tokens

/** Fill colour and opacity of a value on the grid's scale; null: a blank cell. */
function colour(grid, v) {
  if (v === null) return null;
  if (grid.scale === "share") return [BLUE, ink(v)];
  const t = Math.min(1, Math.abs(v) / grid.limit);
  return [v >= 0 ? BLUE : RED, t];
}

/**
 * Draw `grid` into `box` (replacing what was there).
 * @param {HTMLElement} box
 * @param {{rows: string[], columns: string[], values: (number|null)[][], cells: string[][],
 *   titles: string[][], scale: "share"|"signed", limit: number, legend: {text: string}, label: string,
 *   hows?: (object|null)[][]}} grid hows: each cell's descriptor for "How is this computed?"
 * @param {{onPick?: (i: number, j: number) => void, picked?: [number, number]|null, name?: string}} opts
 */
export function drawGrid(box, grid, { onPick = null, picked = null, name = "" } = {}) {
  const nRows = grid.rows.length;
  const nCols = grid.columns.length;
  const cell = Math.max(14, Math.min(34, Math.floor(640 / Math.max(nCols, 1))));
  const rowH = Math.max(12, Math.min(22, cell));
  const rotated = grid.columns.some((c) => c.length > 4);
  const top = rotated ? ROTATED_LABELS : 18;
  const width = ROW_LABELS + nCols * cell + 4;
  const height = top + nRows * rowH + 4;
  const svg = s("svg", {
    class: "ci-grid", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": grid.label,
  });
  const rects = [];
  for (let i = 0; i < nRows; i++) {
    svg.append(s("text", { class: "ci-axis is-row", x: ROW_LABELS - 4, y: top + i * rowH + rowH / 2 + 3 }, grid.rows[i]));
    for (let j = 0; j < nCols; j++) {
      const v = grid.values[i][j];
      const c = colour(grid, v);
      const x = ROW_LABELS + j * cell;
      const y = top + i * rowH;
      const rect = s("rect", {
        class: ["ci-cell", c === null && "is-blank"], x, y, width: cell, height: rowH,
        fill: c ? c[0] : null, "fill-opacity": c ? String(c[1]) : null, "data-i": i, "data-j": j,
        "data-value": v === null ? null : String(v),
      }, s("title", {}, grid.titles[i][j]));
      if (v !== null) markNumber(rect, grid.hows?.[i][j], v);
      rects.push(rect);
      svg.append(rect);
      if (cell >= 26 && grid.cells[i][j]) {
        svg.append(s("text", {
          class: ["ci-cell-text", c && c[1] > 0.55 && "is-dark"], x: x + cell / 2, y: y + rowH / 2 + 3,
        }, grid.cells[i][j]));
      }
    }
  }
  for (let j = 0; j < nCols; j++) {
    const x = ROW_LABELS + j * cell + cell / 2;
    svg.append(rotated
      ? s("text", { class: "ci-axis", x, y: top - 4, transform: `rotate(-60 ${x} ${top - 4})` }, grid.columns[j])
      : s("text", { class: "ci-axis", x, y: top - 5, "text-anchor": "middle" }, grid.columns[j]));
  }
  const readout = h("p", { class: "ci-readout", "aria-live": "polite" });
  const figure = h("figure", { class: "ci-figure", tabindex: "0", "aria-label": grid.label, "data-grid": name }, svg);
  let at = picked ? [...picked] : null;

  function show(cellAt, pick = false) {
    at = cellAt;
    for (const r of rects) r.classList.toggle("is-at", at !== null && Number(r.dataset.i) === at[0] && Number(r.dataset.j) === at[1]);
    text(readout, at ? grid.titles[at[0]][at[1]] : "");
    if (!pick || !at) return;
    rects[at[0] * nCols + at[1]].dispatchEvent(new CustomEvent("ci-pick", { bubbles: true }));
    onPick?.(at[0], at[1]);
  }

  svg.addEventListener("pointerover", (event) => {
    const r = event.target.closest?.(".ci-cell");
    if (r) show([Number(r.dataset.i), Number(r.dataset.j)]);
  });
  svg.addEventListener("click", (event) => {
    const r = event.target.closest?.(".ci-cell");
    if (r) show([Number(r.dataset.i), Number(r.dataset.j)], true);
  });
  figure.addEventListener("focus", () => show(at ?? [0, 0]));
  figure.addEventListener("keydown", (event) => {
    const d = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] }[event.key];
    if (d) {
      event.preventDefault();
      const [i, j] = at ?? [0, 0];
      show([Math.min(nRows - 1, Math.max(0, i + d[0])), Math.min(nCols - 1, Math.max(0, j + d[1]))]);
      figure.querySelector(".is-at")?.scrollIntoView({ block: "nearest", inline: "nearest" });
    } else if ((event.key === "Enter" || event.key === " ") && at) {
      event.preventDefault();
      show(at, true);
    }
  });
  fill(box, figure, readout, h("p", { class: "ci-legend" }, grid.legend.text));
  if (at) show(at);
  return { figure, show };
}
