// JSON requests for the Real model view: one error shape for every failure
// (the API's first field message, or the HTTP status), and a POST that waits
// its turn when the server's line of model jobs is full (429 + Retry-After).

const FALLBACK_RETRY_S = 5; // only if a 429 came without a usable Retry-After

/**
 * Fetch JSON; throw an Error whose message is the API's first problem
 * (with .status, and .retryAfter in seconds on a 429).
 * @param {string} url same-origin path
 * @param {RequestInit} [options]
 */
export async function getJson(url, options) {
  const response = await fetch(url, options);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = body.detail?.[0]?.msg ?? `the server answered ${response.status}`;
    const error = new Error(message);
    error.status = response.status;
    const retryAfter = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
    error.retryAfter = retryAfter >= 1 ? retryAfter : FALLBACK_RETRY_S;
    throw error;
  }
  return body;
}

/** POST a JSON body. */
export function postJson(url, body) {
  return getJson(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
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
      if (error.status !== 429) throw error;
      for (let left = error.retryAfter; left > 0; left -= 1) {
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
