// The notebook's requests to /api/notebook (same origin only, CSP connect-src 'self').
// Each call resolves to {ok, status, body}; it rejects only when the server
// cannot be reached, which the caller reports without losing the learner's state.

import { toJson } from "../shared/json.js";

async function send(path, options, raw = false) {
  const response = await fetch(`/api/notebook/${path}`, options);
  const type = response.headers.get("content-type") || "";
  const json = type.startsWith("application/json") && !(raw && response.ok);
  let body = null;
  try {
    body = json ? await response.json() : await response.text();
  } catch {
    body = null;
  }
  return { ok: response.ok, status: response.status, body };
}

/** GET /api/notebook/<path>. */
export function nbGet(path) {
  return send(path, { method: "GET" });
}

/**
 * POST `data` as JSON to /api/notebook/<path>. With `raw`, a successful
 * answer stays the server's text (downloads keep every float as written, -0 too).
 */
export function nbPost(path, data, raw = false) {
  const options = {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: toJson(data),
  };
  return send(path, options, raw);
}

/**
 * The first readable message of a refused request: the server's 422 detail
 * messages without their field prefix, or the HTTP status.
 */
export function errorText(answer) {
  const detail = answer.body && Array.isArray(answer.body.detail) ? answer.body.detail : [];
  if (!detail.length) return `The server refused this (HTTP ${answer.status}).`;
  return detail
    .map((d) => (d.field && d.msg.startsWith(`${d.field}: `) ? d.msg.slice(d.field.length + 2) : d.msg))
    .map((m) => (/[.!?]$/.test(m) ? m : `${m}.`)) // each a sentence: never "…is missing Nothing changed."
    .join(" ");
}

/**
 * A refused state's messages by field path ({"q[1]": "..."}), or {body} when
 * the server named no field. A refused held edit made from the explorer's
 * fields ("edits[0].q[1]") is shown next to that field ("q[1]"), in the same words.
 */
export function fieldErrorsOf(answer) {
  const errors = {};
  const detail = (answer.body && answer.body.detail) || [];
  for (const item of Array.isArray(detail) ? detail : []) {
    const field = String(item.field || "body").replace(/^edits\[\d+\]\./, "");
    errors[field] = String(item.msg).startsWith(item.field) ? field + String(item.msg).slice(String(item.field).length) : item.msg;
  }
  if (!detail.length) errors.body = `The server refused this state (HTTP ${answer.status}).`;
  return errors;
}
