// loadExample: make `example` (the learner's own, or a transformer head's row
// opened from another section) the page's one example: a held example of one
// query, through state.js like every other change; see its contract below.

import { replaceHeld } from "./state.js";

/**
 * The held example of one query that `example` is (no sequence around it): its
 * one row is q over the sources, masked by `allowed`.
 */
export function heldOfOne(example) {
  const n = Array.isArray(example.labels) ? example.labels.length : 0;
  return {
    id: "own",
    labels: example.labels,
    queries: [example.q],
    keys: example.keys,
    values: example.values,
    mask: [example.allowed ?? Array(n).fill(true)],
    row: 0,
    masked: true,
    scale: example.scale ?? null,
  };
}

/**
 * Replace the page's example with `example` and redraw (e.g. a transformer
 * head's row, or the learner's own example).
 *
 * example = {labels, keys, values, q, allowed?, scale?}:
 *   labels  1 to the lab's most sources (GET /api/limits: max_sources) distinct strings
 *           (any names, not only A/B/C; escaped when drawn),
 *   keys    one [x, y] per label (2-D, so the planes can draw them),
 *   values  one [x, y] per label,
 *   q       [x, y],
 *   allowed optional, one boolean per label (true = q may attend; default all true),
 *   scale   optional number > 0 that multiplies the dot products (default null: 1/√d_k).
 * Every coordinate must lie within the lab's limit (max_magnitude, ±1,000,000).
 *
 * The server validates it like any other state: a refusal keeps the current
 * example and puts the lab's message next to the field ("keys[2][0]"), or in
 * the banner for a field with no input on the page (too many sources: "labels").
 * It replaces the held A/B/C sequence (the held table shows its one row);
 * "Reset example" returns to the worked example. Returns nothing; subscribe()
 * to see the answer.
 */
export function loadExample(example) {
  replaceHeld(heldOfOne(example), "own");
}
