// The lab's limits as the server declares them (GET /api/limits, attnlab.lab.limits): the
// largest magnitudes, the source counts, the real model's caps and sampling ranges, and the
// sentences that state them. The page writes none of its own: it asks once and sets its
// controls' ranges from the answer. The server checks every request again either way.

import { getJSON } from "./http.js";

let asked = null;

/** The limits (one request per page; asked again after a failure). */
export function getLimits() {
  if (!asked) {
    asked = getJSON("/api/limits").catch((error) => {
      asked = null;
      throw error;
    });
  }
  return asked;
}

/** Set a number input's `min` and `max` (each only when it is a number). */
export function bound(input, min, max) {
  if (typeof min === "number") input.min = String(min);
  if (typeof max === "number") input.max = String(max);
}
