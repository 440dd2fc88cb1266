// The share link: the page's URL carries the whole held example (the page's
// one state), so a teacher can hand out the address and a new browser opens
// the same numbers.
//
// Format: `#example=<base64url of the held example's JSON text>` (UTF-8, no
// padding), the JSON written by toJson so a typed -0 survives the trip. Links
// made before the one state may also carry `&own=<base64url of an own example>`
// (loadExample's argument: labels, keys, values, q, allowed, scale): it was what
// their explorer showed, so statestart.js opens it as the held example. The
// page never trusts a link: the server validates it (POST /api/state) like any
// other held example, and a refused or damaged link gets a clear message and
// the worked example.

import { toJson } from "../shared/json.js";

const KEY = "example";

/** Base64url (RFC 4648 §5, no padding) of `data`'s JSON text. */
export function encodeExample(data) {
  const bytes = new TextEncoder().encode(toJson(data));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The example the URL's hash carries: {example} when there is one that reads
 * as JSON, {damaged: true} when there is one that does not, or null.
 */
export function readLink(hash = location.hash, key = KEY) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const text = params.get(key);
  if (text === null) return null;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return { example: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
  } catch {
    return { damaged: true };
  }
}

/**
 * Put `data` in the URL's hash under `key` ("example" or "own"; null removes
 * it), replacing this history entry: no Back-button trail per drag.
 */
export function writeLink(data, key = KEY) {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (data === null) params.delete(key);
  else params.set(key, encodeExample(data));
  const hash = params.toString() ? `#${params}` : "";
  if (location.hash !== hash) history.replaceState(null, "", hash || location.pathname);
}
