// A practice challenge's typed answer: its form, mounted from the challenge data, and read back.
// The browser only reads the text as numbers (a typed "−" counts as "-"); the server checks the answer.
// Its words are the challenge data's (lab.challenge_set: the fields' labels, each field's "not_a_number").

import { h } from "./dom.js";

/**
 * The response form of challenge `c`, showing `saved` (the attempt's response, or null).
 * look: the page's names (form: the inputs' id prefix; choice, choiceRow, numbers, field: class names);
 * noResponse: the words shown for a challenge checked on the page's inputs alone.
 */
export function responseForm(c, saved, look, noResponse) {
  const spec = c.response;
  if (!spec) return h("p", { class: "hint" }, noResponse);
  if (spec.type === "choice") {
    return h(
      "fieldset",
      { class: look.choice },
      h("legend", null, spec.label),
      spec.options.map((o) => {
        const id = `${look.form}-${c.id}-${o.id}`;
        const input = h("input", { type: "radio", name: `${look.form}-${c.id}`, value: o.id, id });
        input.checked = saved === o.id;
        return h("div", { class: look.choiceRow }, input, h("label", { for: id }, o.text));
      }),
    );
  }
  return h(
    "fieldset",
    { class: look.numbers },
    h("legend", null, spec.label),
    spec.fields.map((f, j) => {
      const id = `${look.form}-${c.id}-${j}`;
      const input = h("input", { type: "text", inputmode: "decimal", id, "aria-label": f.label });
      input.value = saved ? String(saved[j]) : "";
      return h("span", { class: look.field }, h("label", { for: id }, f.name), input);
    }),
  );
}

/**
 * The response form's value, or an error message when it is not usable.
 * @returns {{value: null | string | number[]} | {error: string}}
 */
export function readResponse(c, form) {
  const spec = c.response;
  if (!spec) return { value: null };
  if (spec.type === "choice") {
    const picked = form.querySelector("input[type=radio]:checked");
    return picked ? { value: picked.value } : { error: spec.not_picked };
  }
  const values = [];
  const inputs = form.querySelectorAll("input[type=text]");
  for (const [j, input] of inputs.entries()) {
    const raw = input.value.trim().replace(/\u2212/g, "-");
    const x = raw === "" ? NaN : Number(raw);
    if (!Number.isFinite(x)) return { error: spec.fields[j].not_a_number }; // the lab's words for that field
    values.push(x);
  }
  return { value: values };
}
