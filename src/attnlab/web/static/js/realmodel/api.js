// JSON requests for the Real model view, through the page's one HTTP module
// (shared/http.js): each resolves to the answer or throws its ApiError (the lab's
// sentence as .message, .status, .detail, and .retryAfter in seconds on a 429),
// and a POST that waits its turn when the server's line of model jobs is full.

import { ApiError, getJSON, postJSON } from "../shared/http.js";

const FALLBACK_RETRY_S = 5; // only if a 429 came without a usable Retry-After

/** GET JSON (see shared/http.js). */
export function getJson(url, options) {
  return getJSON(url, options);
}

/** POST a JSON body (see shared/http.js). */
export function postJson(url, body) {
  return postJSON(url, body);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POST a JSON body; while the server answers 429 (too many jobs waiting),
 * wait the seconds its Retry-After asks and try again.
 * @param {string} url
 * @param {object} body
 * @param {(message: string, secondsLeft: number) => void} onWait called each second of a wait
 */
export async function postJsonInTurn(url, body, onWait) {
  for (;;) {
    try {
      return await postJson(url, body);
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
 * Rows of an n x n grid sent packed (base64 of little-endian float32, row-major,
 * NaN = blocked) as the server holds them: each value exactly, null where blocked.
 * @param {string} b64
 * @param {number} n
 * @returns {(number|null)[][]}
 */
export function unpackRows(b64, n) {
  const raw = atob(b64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const cells = new Float32Array(bytes.buffer, 0, n * n); // the platform is little-endian, as sent
  const rows = new Array(n);
  for (let i = 0; i < n; i++) {
    const row = new Array(n);
    for (let j = 0; j < n; j++) {
      const w = cells[i * n + j];
      row[j] = Number.isNaN(w) ? null : w;
    }
    rows[i] = row;
  }
  return rows;
}
