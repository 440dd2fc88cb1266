// The block section's requests to /api/block (same origin, CSP connect-src 'self').
// Each call resolves to {ok, status, body}; it rejects only when the server
// cannot be reached. Bodies go through toJson, which keeps a typed -0.

import { toJson } from "../shared/json.js";

async function send(path, options) {
  const response = await fetch(`/api/block${path}`, options);
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return { ok: response.ok, status: response.status, body };
}

/** GET /api/block<path> ("/example", "/practice"). */
export function blockGet(path) {
  return send(path, { method: "GET" });
}

/** POST `data` as JSON to /api/block<path> ("" for the walk, "/study", "/check"). */
export function blockPost(path, data) {
  return send(path, { method: "POST", headers: { "content-type": "application/json" }, body: toJson(data) });
}

/**
 * The server's 422 detail as {field: message}, the message without its field
 * prefix (the page shows it next to that field), or {body: message}.
 */
export function fieldErrors(answer) {
  const detail = answer.body && Array.isArray(answer.body.detail) ? answer.body.detail : [];
  const errors = {};
  for (const d of detail) {
    const field = d.field || "body";
    const msg = String(d.msg || "");
    errors[field] = msg.startsWith(`${field}: `) ? msg.slice(field.length + 2) : msg;
  }
  if (!detail.length) errors.body = `The server refused this (HTTP ${answer.status}).`;
  return errors;
}
