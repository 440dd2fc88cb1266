// Labelled number inputs with an inline error next to each one.
// The browser only reads the typed text as a number (or refuses it, in the lab's
// words: pageWords().number); the server validates again and its message lands
// next to the same field.

import { clearFieldError, setFieldError } from "./state.js";
import { h, text } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Read `raw` as a finite number, or return an error message.
 * @returns {{value: number} | {error: string}}
 */
export function parseNumber(raw) {
  const words = pageWords().number;
  const cleaned = raw.trim().replace(/\u2212/g, "-");
  if (cleaned === "") return { error: words.empty };
  if (!NUMBER.test(cleaned)) return { error: words.not_a_number };
  const value = Number(cleaned);
  if (!Number.isFinite(value)) return { error: words.too_large };
  return { value };
}

function fieldId(path) {
  return `field-${path.replace(/[^a-z0-9]+/gi, "-").replace(/-$/, "")}`;
}

/**
 * A number input for field `path` (e.g. "q[0]", "values[1][0]").
 * `onValue(number)` runs for a valid entry; an invalid one shows its message
 * and changes nothing else.
 */
export function numberField({ path, label, onValue }) {
  const id = fieldId(path);
  const input = h("input", {
    id,
    type: "text",
    inputmode: "decimal",
    autocomplete: "off",
    spellcheck: "false",
    "data-field": path,
    "aria-describedby": `${id}-error`,
  });
  const error = h("span", { id: `${id}-error`, class: "field-error", "data-error-for": path });
  const el = h("span", { class: "field" }, h("label", { for: id }, label), input, error);
  let committed = null; // the text last acted on: Enter then blur is one edit, not two
  const commit = () => {
    if (input.value === committed) return;
    committed = input.value;
    const parsed = parseNumber(input.value);
    if ("error" in parsed) {
      setFieldError(path, parsed.error);
    } else {
      clearFieldError(path);
      onValue(parsed.value);
    }
  };
  input.addEventListener("change", commit);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") commit();
  });
  return {
    el,
    input,
    /** Show `shown` unless the learner is typing or an error keeps their text. */
    update(shown, message) {
      const typing = document.activeElement === input && input.value !== shown && !message;
      if (!message && !typing) {
        input.value = shown;
        committed = shown;
      }
      text(error, message || "");
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    },
  };
}

/** The message for `path` from fieldErrors, including messages for a parent field ("q"). */
export function messageFor(errors, path) {
  if (errors[path]) return errors[path];
  const parent = path.replace(/\[\d+\]$/, "");
  return parent !== path ? errors[parent] || "" : "";
}
