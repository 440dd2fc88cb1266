// What the explorer's held-edit route (/api/state, owned with the explorer's transport) needs
// beyond the page's one HTTP module (shared/http.js): its refusals shown next to the fields the
// edits came from. The notebook's own requests use shared/http.js directly. errorText is
// re-exported only for the explorer's modules that still import it from here.

import { fieldMessages } from "../shared/http.js";

export { errorText } from "../shared/http.js";

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
