// The page's one JSON writer, for every request body (fetch and WebSocket)
// and every sessionStorage copy. JSON.stringify writes -0 as "0", which would
// lose the sign the learner typed before the engine ever saw it; here -0 is
// written "-0.0", which Python reads as -0.0 and JSON.parse reads back as -0.
// Every other value is written exactly as JSON.stringify writes it.

/**
 * JSON text of plain data (objects, arrays, numbers, strings, booleans, null)
 * that keeps -0.
 * @param {unknown} data
 * @returns {string}
 */
export function toJson(data) {
  if (Object.is(data, -0)) return "-0.0";
  if (Array.isArray(data)) {
    // As JSON.stringify: a hole, undefined or a function in an array is null.
    return `[${Array.from(data, (item) => (skipped(item) ? "null" : toJson(item))).join(",")}]`;
  }
  if (data !== null && typeof data === "object" && typeof data.toJSON !== "function") {
    const members = Object.entries(data)
      .filter(([, value]) => !skipped(value))
      .map(([key, value]) => `${JSON.stringify(key)}:${toJson(value)}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(data);
}

function skipped(value) {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}
