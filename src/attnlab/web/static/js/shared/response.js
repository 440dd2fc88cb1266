// A practice challenge's typed answer, read from its form (the explorer's and the block's practice).
// The browser only reads the text as numbers (a typed "−" counts as "-"); the server checks the answer.

/**
 * The response form's value, or an error message when it is not usable.
 * @returns {{value: null | string | number[]} | {error: string}}
 */
export function readResponse(c, form) {
  const spec = c.response;
  if (!spec) return { value: null };
  if (spec.type === "choice") {
    const picked = form.querySelector("input[type=radio]:checked");
    return picked ? { value: picked.value } : { error: "Pick one answer first." };
  }
  const values = [];
  for (const input of form.querySelectorAll("input[type=text]")) {
    const raw = input.value.trim().replace(/\u2212/g, "-");
    const x = raw === "" ? NaN : Number(raw);
    if (!Number.isFinite(x)) return { error: `“${input.getAttribute("aria-label")}” needs a number.` };
    values.push(x);
  }
  return { value: values };
}
