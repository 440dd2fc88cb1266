// "Show every number": the lab's tables, as the server wrote every cell.

import { fill, h } from "../shared/dom.js";

export function drawTables(root, answer) {
  fill(
    root,
    answer.numbers.map((t) =>
      h(
        "div",
        { class: "cx-table-box", tabindex: 0, role: "region", "aria-label": t.title },
        h(
          "table",
          null,
          h("caption", null, t.title),
          h("thead", null, h("tr", null, t.columns.map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, t.rows.map((r) => h("tr", null, r.map((cell) => h("td", null, cell))))),
        ),
      ),
    ),
  );
}
