// The notebook's requests to /api/notebook, through the page's one HTTP module
// (shared/http.js). Each call resolves to {ok, status, body}; it rejects only when the
// server cannot be reached, which the caller reports without losing the learner's state.

import { fieldMessages, request } from "../shared/http.js";

export { errorText } from "../shared/http.js";

/** GET /api/notebook/<path>. */
export function nbGet(path) {
  return request(`/api/notebook/${path}`);
}

/**
 * POST `data` as JSON to /api/notebook/<path>. With `raw`, a successful
 * answer stays the server's text (downloads keep every float as written, -0 too).
 */
export function nbPost(path, data, raw = false) {
  return request(`/api/notebook/${path}`, { method: "POST", body: data, text: raw });
}

/**
 * A refused state's messages by field path ({"q[1]": "Query q · y must be …"}), or {body} when
 * the server named no field. A refused held edit made from the explorer's fields
 * ("edits[0].q[1]") is shown next to that field ("q[1]"); the words are the lab's either way.
 */
export function fieldErrorsOf(answer) {
  const errors = {};
  for (const [field, msg] of Object.entries(fieldMessages(answer))) {
    errors[field.replace(/^edits\[\d+\]\./, "")] = msg;
  }
  return errors;
}
