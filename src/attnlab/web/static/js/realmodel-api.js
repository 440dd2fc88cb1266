// JSON requests for the Real model view: one error shape for every failure
// (the API's first field message, or the HTTP status).

/**
 * Fetch JSON; throw an Error whose message is the API's first problem.
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
