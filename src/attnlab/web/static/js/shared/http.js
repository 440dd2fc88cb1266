// The page's one HTTP convention (same origin, CSP connect-src 'self'):
// getJSON / postJSON resolve to the parsed answer, or throw an ApiError with
// the status and the API's detail [{loc, field, msg}]. `msg` is already the
// sentence the page shows (the lab names the field as its control reads);
// `field` (e.g. "values[1][1]") says which control to show it next to.
// A fetch that cannot reach the server rejects with the browser's TypeError.
// Bodies go through toJson, which keeps a typed -0. postJSONInTurn waits out a
// full line of model jobs (429 with Retry-After). This is the page's only fetch
// (the explorer's socket is its other transport).

import { toJson } from "./json.js";

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{loc: (string|number)[], field: string, msg: string, type?: string}[]} detail
   * @param {number|null} retryAfter seconds, from a 429's Retry-After
   */
  constructor(status, detail, retryAfter = null) {
    super(detail.length ? detail.map((d) => d.msg).join(" ") : `The server refused this (HTTP ${status}).`);
    this.name = "ApiError";
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

/** The answer as {ok, status, body, retryAfter}; never throws for an HTTP status. */
export async function request(url, { method = "GET", body, signal, text = false } = {}) {
  const options = { method, signal };
  if (body !== undefined) {
    options.headers = { "content-type": "application/json" };
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
  const retry = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
  return { ok: response.ok, status: response.status, body: parsed, retryAfter: retry >= 1 ? retry : null };
}

/** The API's error items of a refused answer (an empty list when it named none). */
export function detailOf(answer) {
  const detail = answer && answer.body && Array.isArray(answer.body.detail) ? answer.body.detail : [];
  return detail.filter((d) => d && typeof d.msg === "string");
}

function orThrow(answer) {
  if (answer.ok) return answer.body;
  throw new ApiError(answer.status, detailOf(answer), answer.retryAfter);
}

/** GET JSON; resolve to the answer or throw ApiError. */
export async function getJSON(url, { signal } = {}) {
  return orThrow(await request(url, { signal }));
}

/** POST `body` as JSON; resolve to the answer (`text`: a successful answer as text) or throw ApiError. */
export async function postJSON(url, body, { signal, text = false } = {}) {
  return orThrow(await request(url, { method: "POST", body, signal, text }));
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
 * A refused answer's (or an ApiError's) messages by field ({"values[1][1]": "Source B · value y must be …"}),
 * or {body: message} when the server named no field; shown next to the control with that field.
 */
export function fieldMessages(refused) {
  const status = refused.status;
  const detail = refused instanceof ApiError ? refused.detail : detailOf(refused);
  const errors = {};
  for (const d of detail) {
    const field = String(d.field || "body");
    errors[field] = errors[field] ? `${errors[field]} ${sentence(d.msg)}` : d.msg;
  }
  if (!detail.length) errors.body = `The server refused this (HTTP ${status}).`;
  return errors;
}

function sentence(m) {
  return /[.!?]$/.test(m) ? m : `${m}.`;
}

/** A refused answer's (or an ApiError's) messages as one text: each a sentence. */
export function errorText(refused) {
  const detail = refused instanceof ApiError ? refused.detail : detailOf(refused);
  if (!detail.length) return `The server refused this (HTTP ${refused.status}).`;
  return detail.map((d) => sentence(d.msg)).join(" ");
}
