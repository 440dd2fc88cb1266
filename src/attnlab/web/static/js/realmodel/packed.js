// A head's weights as the server sends them packed (GET .../heads/{layer}/{head}?packed=true):
// decoded here to the same numbers its JSON would give.

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
