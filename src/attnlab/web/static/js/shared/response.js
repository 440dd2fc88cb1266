// A practice challenge's typed answer, read from its form (the explorer's and the block's practice).
// The browser only reads the text as numbers (a typed "−" counts as "-"); the server checks the answer.
// Its messages are the challenge data's (lab.challenge_set: each field's "not_a_number").

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
