// The lab's controls, built once from the answer's control list: a slider (whole numbers or
// numbers) with its value as the server wrote it, a choice, or a text. Sliders are native range inputs,
// so arrow keys, Page Up/Down, Home and End move them. A slider whose largest value follows
// another control (hi_from) takes that control's value as its maximum at once, so the browser
// keeps its value in range while the learner drags. Errors are shown under their control.

import { h, text } from "../shared/dom.js";

function slider(c, onInput) {
  const id = `cx-in-${c.name}`;
  const input = h("input", { type: "range", id, min: c.min, max: c.max, step: c.step, "aria-describedby": `${id}-hint ${id}-error` });
  input.value = String(c.value);
  const value = h("output", { class: "cx-value", for: id, id: `${id}-value` }, c.value_text);
  input.addEventListener("input", () => onInput(c.name, input.value));
  return { input, value, label: h("label", { for: id }, c.label, " ", value) };
}

function choice(c, onInput) {
  const id = `cx-in-${c.name}`;
  const input = h("select", { id, "aria-describedby": `${id}-hint ${id}-error` }, c.options.map((o) => h("option", { value: o.value }, o.text)));
  input.value = String(c.value);
  input.addEventListener("change", () => onInput(c.name, input.value));
  return { input, value: null, label: h("label", { for: id }, c.label) };
}

// A text (one line, or a list of one item a line) is sent when the learner is done with it:
// on leaving the field, on Enter in a one-line box, or on Ctrl+Enter in a list.
function textbox(c, onInput) {
  const id = `cx-in-${c.name}`;
  const many = c.lines > 1;
  const attrs = { id, maxlength: c.max_chars, spellcheck: "false", "aria-describedby": `${id}-hint ${id}-error` };
  const input = many ? h("textarea", { ...attrs, rows: c.lines }) : h("input", { ...attrs, type: "text" });
  input.value = String(c.value);
  const send = () => onInput(c.name, input.value);
  input.addEventListener("change", send);
  input.addEventListener("keydown", (event) => {
    if (many && event.key === "Enter" && (event.ctrlKey || event.metaKey)) send();
  });
  return { input, value: null, label: h("label", { for: id }, c.label) };
}

const MAKERS = { choice, text: textbox };

/**
 * Mount the controls in `root`; returns draw(answer, inputs, errors), which sets the values the
 * page holds, the bounds and the errors.
 * @param {HTMLElement} root
 * @param {(changes: Object<string, string>) => void} onInput the controls that changed, by name
 */
export function mountControls(root, onInput) {
  const parts = new Map();
  /** A slider whose maximum follows `name` takes `value` (plus its offset) as its maximum. */
  function follow(name, value) {
    const moved = {};
    for (const [other, p] of parts) {
      if (p.spec.hi_from !== name || p.spec.kind === "choice" || p.spec.kind === "text") continue;
      p.input.max = String(Number(value) + p.spec.hi_offset);
      moved[other] = p.input.value; // the browser keeps a range input's value inside its bounds
    }
    return moved;
  }
  function changed(name, value) {
    onInput({ [name]: value, ...follow(name, value) });
  }
  return function draw(answer, inputs, errors) {
    if (!parts.size && answer) {
      for (const c of answer.controls) {
        const made = (MAKERS[c.kind] || slider)(c, changed);
        const id = `cx-in-${c.name}`;
        const hint = h("p", { class: "hint", id: `${id}-hint` }, c.hint);
        const error = h("p", { class: "cx-error", id: `${id}-error`, role: "alert" });
        parts.set(c.name, { ...made, hint, error, spec: c });
        root.append(h("div", { class: "cx-control", "data-control": c.name, "data-kind": c.kind }, made.label, made.input, hint, error));
      }
    }
    if (!answer) return;
    for (const [name, p] of parts) {
      const c = answer.controls.find((x) => x.name === name);
      if (c.kind !== "choice" && c.kind !== "text") p.input.max = String(c.max);
      if (name in inputs && document.activeElement !== p.input) p.input.value = String(inputs[name]);
      if (c.hi_from && c.hi_from in inputs) follow(c.hi_from, inputs[c.hi_from]);
      if (p.value) text(p.value, c.value_text);
      const message = errors[name] || "";
      text(p.error, message);
      p.input.setAttribute("aria-invalid", message ? "true" : "false");
    }
  };
}
