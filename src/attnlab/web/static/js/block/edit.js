// Editable inputs and weights: X and every weight matrix as a small grid of
// number fields, mounted once and updated in place from the accepted request.
// A number the browser cannot read is refused next to its field; the server
// checks again and its message (by field path, "weights.heads[1].w_q[2][0]")
// lands next to the same field. The last good walk stays meanwhile.

import { h, text } from "../shared/dom.js";
import { parseNumber } from "../explorer/fields.js";
import { getBlock, resetBlock, setBlockError, setNumber, subscribeBlock } from "./state.js";

/** The server's name for a request path: ["weights","heads",1,"w_q",2,0] -> "weights.heads[1].w_q[2][0]". */
function fieldName(path) {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i ? `.${p}` : p)).join("");
}

function at(obj, path) {
  return path.reduce((o, k) => o[k], obj);
}

/** The number as the request holds it, written so that reading it back gives the same float. */
function shown(value) {
  return Object.is(value, -0) ? "-0" : String(value);
}

/**
 * Mount the editor once the first walk has answered: its matrices, their labels
 * and each cell's name are the lab's (answer.inputs.matrices, named as the walk
 * names them); the numbers are the example's until the accepted request's.
 */
export function mountEditor(root, words) {
  if (getBlock().answer) return build(root, words);
  const stop = subscribeBlock((block) => {
    if (!block.answer) return;
    stop();
    build(root, words);
  });
}

/** Build the editor; `words` are the lab's (answer.words.edit): the picker's label, Reset and its hint. */
function build(root, words) {
  const fields = []; // {input, error, path, field, committed}
  const picker = h("select", { id: "block-edit-pick" });
  const grids = new Map();
  const example = getBlock().example;
  for (const { id, label, path, cells } of getBlock().answer.inputs.matrices) {
    picker.append(h("option", { value: id }, label));
    const value = at(example, path);
    const rows = Array.isArray(value[0]) ? value.map((_, r) => r) : [null];
    const cols = Array.isArray(value[0]) ? value[0].length : value.length;
    const grid = h("div", { class: "block-edit-grid", id: `block-edit-${id}`, role: "group", "aria-label": label });
    grid.classList.add(`cols-${cols}`);
    for (const r of rows) {
      for (let c = 0; c < cols; c++) {
        const p = r === null ? [...path, c] : [...path, r, c];
        const field = fieldName(p);
        const fid = `block-field-${field.replace(/[^a-z0-9]+/gi, "-")}`;
        const input = h("input", { type: "text", inputmode: "decimal", id: fid, "data-field": field, "aria-label": cells[r ?? 0][c], "aria-describedby": `${fid}-error`, autocomplete: "off", spellcheck: "false" });
        const error = h("span", { class: "field-error", id: `${fid}-error`, "data-error-for": field });
        const entry = { input, error, path: p, field, committed: null };
        const commit = () => {
          if (input.value === entry.committed) return;
          entry.committed = input.value;
          const parsed = parseNumber(input.value);
          if ("error" in parsed) setBlockError(field, parsed.error);
          else setNumber(p, parsed.value);
        };
        input.addEventListener("change", commit);
        input.addEventListener("keydown", (e) => e.key === "Enter" && commit());
        fields.push(entry);
        grid.append(h("span", { class: "block-edit-cell" }, input, error));
      }
    }
    grid.hidden = id !== "x";
    grids.set(id, grid);
  }
  picker.addEventListener("change", () => grids.forEach((g, id) => (g.hidden = id !== picker.value)));
  const reset = h("button", { type: "button", id: "block-reset" }, words.reset);
  reset.addEventListener("click", () => resetBlock());
  const problem = h("p", { class: "banner problem", id: "block-problem", role: "alert", hidden: true });
  root.append(
    h("p", { class: "field" }, h("label", { for: "block-edit-pick" }, words.pick), picker),
    h("p", { class: "hint", id: "block-edit-hint" }, getBlock().limits?.words.block_edit.text ?? ""), // the lab's words, with its limit
    ...grids.values(),
    problem,
    h("p", { class: "controls" }, reset, h("span", { class: "hint" }, words.reset_hint.text)),
  );

  function draw(block) {
    if (!block.request) return;
    for (const f of fields) {
      const message = block.errors[f.field] || "";
      const value = shown(at(block.requested || block.request, f.path));
      const typing = document.activeElement === f.input && f.input.value !== value && !message;
      if (!message && !typing) {
        f.input.value = value;
        f.committed = value;
      }
      text(f.error, message);
      if (message) f.input.setAttribute("aria-invalid", "true");
      else f.input.removeAttribute("aria-invalid");
    }
    const known = new Set(fields.map((f) => f.field));
    const other = Object.entries(block.errors).filter(([k]) => !known.has(k));
    text(problem, other.map(([, m]) => m).join(" "));
    problem.hidden = !other.length;
  }
  subscribeBlock(draw);
  draw(getBlock());
}
