// Which held-example edits turn the held example into the explorer's input.
// The server applies them (POST /api/state, lab/sequence.py's edit rules);
// this only compares what the page holds, it computes no numbers.

import { toJson } from "../shared/json.js";

const same = (a, b) => toJson(a) === toJson(b); // -0 differs from 0, as in the engine's inputs

/** The held edits that make `input` the explorer's row, or null when it is not a held row. */
export function editsFor(input, h) {
  if (!same(input.labels, h.labels) || !same(input.keys, h.keys) || (input.scale ?? null) !== null) return null;
  const edits = [];
  if (!same(input.q, h.queries[h.row])) edits.push({ kind: "query", q: input.q });
  if (!same(input.values, h.values)) edits.push({ kind: "values", values: input.values });
  return edits;
}

/**
 * The POST /api/state body for a queued job ({input, detach?, edits, held?}, see
 * state.js): {held, edits} while the explorer shows a held row (or the job edits
 * or replaces the held example), else null (the explorer's own state goes by
 * POST /api/trace). `held` is the held example now; `detached` the explorer's flag now.
 */
export function stateBody(job, held, detached) {
  const example = job.held || held;
  if (!example) return null;
  const attached = !(job.detach ?? detached);
  const derived = attached && !job.held ? editsFor(job.input, example) : null;
  if (derived === null && !job.held && !job.edits.length) return null;
  return { held: example, edits: (derived || []).concat(job.edits) };
}
