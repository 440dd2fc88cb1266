// Which held-example edits turn the held example into the explorer's input.
// The server applies them (POST /api/state, lab/sequence.py's edit rules);
// this only compares what the page holds, it computes no numbers.

import { toJson } from "./json.js";

const same = (a, b) => toJson(a) === toJson(b); // -0 differs from 0, as in the engine's inputs

/** The held edits that make `input` the explorer's row, or null when it is not a held row. */
export function editsFor(input, h) {
  if (!same(input.labels, h.labels) || !same(input.keys, h.keys) || (input.scale ?? null) !== null) return null;
  const edits = [];
  if (!same(input.q, h.queries[h.row])) edits.push({ kind: "query", q: input.q });
  if (!same(input.values, h.values)) edits.push({ kind: "values", values: input.values });
  return edits;
}
