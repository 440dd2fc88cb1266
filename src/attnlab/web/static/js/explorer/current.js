// "Read the current numbers": shapes, notation, the keys table and the
// editable values (each coordinate of each value), with "Reset example".
// Every label is the answer's (display).

import { fill, h, srcClass, text } from "../shared/dom.js";
import { messageFor, numberField } from "./fields.js";

export function mountCurrent(els, { onValue }) {
  let fields = []; // rebuilt only when the number or width of values changes
  let shape = "";

  function buildFields(result) {
    const { display } = result;
    fields = display.sources.map((src, i) =>
      src.value_fields.map((label, j) =>
        numberField({
          path: `values[${i}][${j}]`,
          label,
          onValue: (value) => onValue(i, j, value),
        }),
      ),
    );
    fill(
      els.values,
      fields.map((row, i) =>
        h("fieldset", { class: ["value-row", srcClass(i)] }, h("legend", null, display.sources[i].value_legend), row.map((f) => f.el)),
      ),
    );
  }

  return function draw(state) {
    const result = state.result;
    if (!result) return;
    const { trace, display } = result;
    text(els.shapes, display.labels.shapes.text);
    text(els.notation, display.labels.notation.text);
    fill(
      els.keysBody,
      display.sources.map((src) =>
        h("tr", null, h("th", { scope: "row" }, src.label), h("td", { class: "num" }, src.key), h("td", { class: "num" }, display.q)),
      ),
    );
    const nextShape = `${trace.labels.join("\u0000")}|${trace.d_v}`;
    if (nextShape !== shape) {
      shape = nextShape;
      buildFields(result);
    }
    fields.forEach((row, i) =>
      row.forEach((f, j) => f.update(display.values_coords[i][j], messageFor(state.fieldErrors, `values[${i}][${j}]`))),
    );
  };
}
