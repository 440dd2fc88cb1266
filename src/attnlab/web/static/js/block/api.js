// The block section's requests to /api/block, through the page's one HTTP module
// (shared/http.js). Each call resolves to {ok, status, body}; it rejects only when the
// server cannot be reached. A refusal's messages are the lab's sentences, by field.

import { fieldMessages, request } from "../shared/http.js";

/** GET /api/block<path> ("/example", "/practice"). */
export function blockGet(path) {
  return request(`/api/block${path}`);
}

/** POST `data` as JSON to /api/block<path> ("" for the walk, "/study", "/check"). */
export function blockPost(path, data) {
  return request(`/api/block${path}`, { method: "POST", body: data });
}

/** The server's 422 detail as {field: message} (shown next to that field), or {body: message}. */
export const fieldErrors = fieldMessages;
