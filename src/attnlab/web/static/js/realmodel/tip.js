// The heatmap's cell readout, at any number of tokens: hovering a cell, or
// moving a cell cursor with the arrow keys while the heatmap's figure has
// keyboard focus, outlines that cell and shows one tooltip beside it with
// the cell's words as the server wrote them (the head's readout template,
// filled with its printed share, and its full-precision one where the head
// sent it: "share 0.12 (exactly 0.1234567)"). A visually hidden live line
// says the same to screen readers. Above 64 tokens the cells are one image,
// so the cell is found from the pointer's position (pixel layout only: the
// strings are the API's, looked up, never computed).
import { h, s, text } from "../shared/dom.js";
import { cellWords } from "./draw.js";

const PAD = 4; // px around the tooltip's text

/**
 * Wire the readout to the heatmap's figure (focusable) and svg (redrawn by drawHeatmap).
 * @param {HTMLElement} figure
 * @param {SVGSVGElement} svg
 * @returns {{update: (grid: object|null) => void}} call after each draw with its grid:
 *   {tokens, head, cell, x0, y0, width, focus} (drawHeatmap's)
 */
export function setupCellTip(figure, svg) {
  const live = h("p", { class: "sr-only rm-cell-readout", "aria-live": "polite" });
  figure.append(live);
  let grid = null;
  let at = null; // [query, key] of the cell shown, or null
  let keyboard = false; // the cursor was moved with the keys (kept while the figure has focus)

  function words([i, j]) {
    return cellWords(grid.head, grid.tokens, i, j);
  }

  function draw() {
    svg.querySelector(".rm-tip-layer")?.remove();
    if (!grid || !at) return;
    const [i, j] = at;
    const { cell, x0, y0, width } = grid;
    const x = x0 + j * cell;
    const y = y0 + i * cell;
    const label = s("text", { class: "rm-tip-text", x: 0, y: 0 }, words(at));
    const back = s("rect", { class: "rm-tip-back", rx: 3 });
    const tip = s("g", { class: "rm-tip", "data-q": i, "data-k": j }, back, label);
    const layer = s("g", { class: "rm-tip-layer" },
      s("rect", { class: "rm-tip-cell", x: x - 1, y: y - 1, width: cell + 1, height: cell + 1 }), tip);
    svg.append(layer);
    // size the box to its text, then keep it inside the picture (beside the cell, or below it)
    const box = label.getBBox();
    const tw = box.width + 2 * PAD;
    const th = box.height + 2 * PAD;
    const left = Math.max(0, Math.min(x + cell + 6, width - tw - 2));
    const top = left < x + cell && left + tw > x ? y + cell + 4 : Math.max(0, y - th / 2 + cell / 2);
    back.setAttribute("x", String(left));
    back.setAttribute("y", String(top));
    back.setAttribute("width", String(tw));
    back.setAttribute("height", String(th));
    label.setAttribute("x", String(left + PAD));
    label.setAttribute("y", String(top + PAD - box.y));
    text(live, words(at));
  }

  function show(cellAt) {
    at = cellAt;
    draw();
  }

  // the cell under the pointer, in the svg's own units
  function cellOf(event) {
    const ctm = svg.getScreenCTM();
    if (!grid || !ctm) return null;
    const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(ctm.inverse());
    const n = grid.tokens.length;
    const i = Math.floor((p.y - grid.y0) / grid.cell);
    const j = Math.floor((p.x - grid.x0) / grid.cell);
    return i >= 0 && j >= 0 && i < n && j < n ? [i, j] : null;
  }

  svg.addEventListener("pointermove", (event) => {
    if (event.target.closest?.(".rm-tip-layer")) return;
    const c = cellOf(event);
    if (c && (!at || c[0] !== at[0] || c[1] !== at[1])) show(c);
    else if (!c && !keyboard) show(null);
  });
  svg.addEventListener("pointerleave", () => { if (!keyboard) show(null); });
  figure.addEventListener("keydown", (event) => {
    const d = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] }[event.key];
    if (!grid || !d) return;
    event.preventDefault(); // the keys move the cursor, not the scroll
    const n = grid.tokens.length;
    const [i, j] = at ?? [grid.focus ?? 0, 0];
    keyboard = true;
    show(at ? [Math.min(n - 1, Math.max(0, i + d[0])), Math.min(n - 1, Math.max(0, j + d[1]))] : [i, j]);
    svg.querySelector(".rm-tip-cell")?.scrollIntoView({ block: "nearest", inline: "nearest" });
  });
  figure.addEventListener("focus", () => {
    if (!grid) return;
    keyboard = true;
    show(at ?? [grid.focus ?? 0, 0]);
  });
  figure.addEventListener("blur", () => { keyboard = false; show(null); });

  return {
    update(next) {
      const same = grid && next && grid.tokens === next.tokens;
      grid = next;
      if (!same) at = null; // another text: the old cell means nothing
      draw();
    },
  };
}
