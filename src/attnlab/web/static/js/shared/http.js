// The page's one HTTP convention (same origin, CSP connect-src 'self'): every call
// resolves with the answer, or throws an ApiError carrying the status, the API's fields
// [{loc, field, msg}] and the page's messages (each field's `msg`, already the sentence the
// page shows next to that control: the lab names the field as its control reads). A
// refusal that names no field gets the lab's sentence for it (words.http, served inside
// the page). The explorer's socket answers in the same convention (ApiError.of).
// A fetch that cannot reach the server rejects with the browser's TypeError.
// Bodies go through toJson, which keeps a typed -0. postJSONInTurn waits out a full line
// of model jobs (429 with Retry-After). This is the page's only fetch. Each request names
// its tab (X-Attnlab-Tab: a random id made once per page), so the server's line of model
// jobs serves a computer's tabs in turn (web/realmodel/line.py).

import { toJson } from "./json.js";
import { pageWords } from "./words.js";

/** The API's error items in `body` (an empty list when it named none). */
function fieldsOf(body) {
  const detail = body && Array.isArray(body.detail) ? body.detail : [];
  return detail.filter((d) => d && typeof d.msg === "string");
}

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{loc: (string|number)[], field: string, msg: string, type?: string}[]} fields
   * @param {number|null} retryAfter seconds, from a 429's Retry-After
   */
  constructor(status, fields, retryAfter = null) {
    const http = pageWords().http || {};
    const messages = fields.length ? fields.map((d) => d.msg) : [(status >= 500 ? http.failed : http.refused) || ""];
    super(messages.join("\n")); // one message per line; views place `messages` one by one
    this.name = "ApiError";
    this.status = status;
    this.fields = fields;
    this.detail = fields; // the API's name for them
    this.messages = messages;
    this.retryAfter = retryAfter;
  }

  /** The error for a refused answer with status `status` and JSON body `body`. */
  static of(status, body, retryAfter = null) {
    return new ApiError(status, fieldsOf(body), retryAfter);
  }
}

/** This page's tab: 24 hex digits (crypto.getRandomValues works on a plain-http address too). */
const TAB = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");

/** The answer of `url`, parsed (`text`: a successful answer as text); throws ApiError for an HTTP error. */
async function call(url, { method = "GET", body, signal, text = false } = {}) {
  const options = { method, signal, headers: { "x-attnlab-tab": TAB } };
  if (body !== undefined) {
    options.headers["content-type"] = "application/json";
    options.body = toJson(body);
  }
  const response = await fetch(url, options);
  const type = response.headers.get("content-type") || "";
  let parsed = null;
  try {
    parsed = type.startsWith("application/json") && !(text && response.ok) ? await response.json() : await response.text();
  } catch {
    parsed = null;
  }
  if (response.ok) return parsed;
  const retry = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
  throw ApiError.of(response.status, parsed, retry >= 1 ? retry : null);
}

/** GET JSON; resolve to the answer or throw ApiError. */
export function getJSON(url, { signal } = {}) {
  return call(url, { signal });
}

/** POST `body` as JSON; resolve to the answer (`text`: a successful answer as text) or throw ApiError. */
export function postJSON(url, body, { signal, text = false } = {}) {
  return call(url, { method: "POST", body, signal, text });
}

const FALLBACK_RETRY_S = 5; // only if a 429 came without a usable Retry-After

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POST `body` as JSON; while the server answers 429 (its line of jobs is full), wait the
 * seconds its Retry-After asks and try again.
 * @param {string} url
 * @param {object} body
 * @param {(message: string, secondsLeft: number) => void} onWait called each second of a wait,
 *   with the server's sentence for the 429
 */
export async function postJSONInTurn(url, body, onWait) {
  for (;;) {
    try {
      return await postJSON(url, body);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 429) throw error;
      for (let left = error.retryAfter ?? FALLBACK_RETRY_S; left > 0; left -= 1) {
        onWait(error.message, left);
        await sleep(1000);
      }
    }
  }
}

/**
 * An ApiError's messages by field ({"values[1][1]": "Source B · value y must be …"}), the first
 * for each field, or {body: its message} when the server named no field; each is shown next to
 * the control with that field.
 */
export function fieldMessages(error) {
  const errors = {};
  for (const d of error.fields) {
    const field = String(d.field || "body");
    if (!(field in errors)) errors[field] = d.msg;
  }
  if (!error.fields.length) errors.body = error.messages[0];
  return errors;
}
