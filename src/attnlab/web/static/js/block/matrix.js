// One tensor of the block walk as a small table: its label and formula, its
// rows (tokens) and columns, every number as the server displays it. A
// product's cells are reachable by keyboard (one tab stop per table, arrow
// keys move between cells); focusing or hovering a cell shows its ordered sum
// ("Q¹ [A, 1] = 1×0 + (−1)×0.5 + … = −1", written by the server) under the table.
// Cells whose number differs in the other norm placement carry "changed".

import { h, text } from "../shared/dom.js";

/**
 * @param {object} t a Tensor of docs/block-api.md {name, label, formula_shown, rows, cols, display, precise, sums}
 * @param {{changed?: boolean[][], changedNote?: string, idPrefix?: string}} options
 *   changedNote: the lab's words a screen reader hears after a changed cell
 * @returns {HTMLElement}
 */
export function tensorView(t, options = {}) {
  const changed = options.changed || null;
  const prefix = options.idPrefix || "blk";
  const safe = `${prefix}-${t.name.replace(/[^a-z0-9]+/gi, "-")}`;
  const sum = h("p", { class: "block-sum", id: `${safe}-sum`, "aria-live": "polite" });
  const cells = [];
  const show = (r, c) => text(sum, t.sums[r][c]);
  const body = t.display.map((row, r) =>
    h(
      "tr",
      null,
      h("th", { scope: "row" }, t.rows[r]),
      row.map((shown, c) => {
        const isChanged = changed && changed[r] && changed[r][c];
        const td = h(
          "td",
          {
            class: ["num", isChanged ? "cmp-changed" : "", shown === "blocked" ? "blocked" : ""],
            "data-row": String(r),
            "data-col": String(c),
            "data-precise": t.precise[r][c],
            tabindex: r === 0 && c === 0 ? "0" : "-1",
          },
          shown,
          isChanged ? h("span", { class: "sr-only" }, " ", options.changedNote) : null,
        );
        td.addEventListener("focus", () => show(r, c));
        td.addEventListener("mouseenter", () => show(r, c));
        td.addEventListener("keydown", (event) => move(event, r, c));
        cells.push(td);
        return td;
      }),
    ),
  );
  const nCols = t.cols.length;
  function move(event, r, c) {
    const step = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] }[event.key];
    if (!step) return;
    event.preventDefault();
    const nr = Math.max(0, Math.min(t.rows.length - 1, r + step[0]));
    const nc = Math.max(0, Math.min(nCols - 1, c + step[1]));
    const next = cells[nr * nCols + nc];
    for (const cell of cells) cell.setAttribute("tabindex", cell === next ? "0" : "-1");
    next.focus();
  }
  const table = h(
    "table",
    { class: "block-matrix", "aria-labelledby": `${safe}-title`, "aria-describedby": `${safe}-sum` },
    h("thead", null, h("tr", null, h("td", { class: "corner" }), t.cols.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", null, body),
  );
  return h(
    "figure",
    { class: "block-tensor", "data-tensor": t.name, id: safe },
    h("figcaption", { id: `${safe}-title` }, h("span", { class: "block-label" }, t.label), t.formula_shown ? h("span", { class: "block-formula" }, t.formula_shown) : null),
    h("div", { class: "matrix-scroll" }, table),
    sum,
  );
}
