// loadExample: replace the explorer's example (the learner's own, or a
// transformer head's row opened from another section): one request through
// state.js, the page's one state module; see its contract below.

import { replaceExplorer, setFieldError } from "./state.js";

export const MAX_OWN_SOURCES = 8;

/**
 * Replace the explorer's example with `example` and redraw (e.g. a transformer
 * head's row, or the learner's own example).
 *
 * example = {labels, keys, values, q, allowed?, scale?}:
 *   labels  1..8 distinct strings (any names, not only A/B/C; escaped when drawn),
 *   keys    one [x, y] per label (2-D, so the planes can draw them),
 *   values  one [x, y] per label,
 *   q       [x, y],
 *   allowed optional, one boolean per label (true = q may attend; default all true),
 *   scale   optional number > 0 that multiplies the dot products (default null: 1/√d_k).
 * Every coordinate must lie within ±1,000,000 (the lab's one drawing limit).
 *
 * The server validates it like any other state: a refusal keeps the current
 * example and puts the lab's message next to the field ("keys[2][0]"), or in
 * the banner for a field with no input on the page. While it is shown the
 * explorer is detached from the held A/B/C sequence (which keeps its numbers);
 * "Reset example" returns to the worked example. Returns nothing; subscribe()
 * to see the answer.
 */
export function loadExample(example) {
  const n = Array.isArray(example.labels) ? example.labels.length : 0;
  const input = {
    q: example.q,
    keys: example.keys,
    values: example.values,
    labels: example.labels,
    allowed: example.allowed ?? Array(n).fill(true),
    scale: example.scale ?? null,
  };
  if (n < 1 || n > MAX_OWN_SOURCES) {
    setFieldError("labels", `An example needs 1 to ${MAX_OWN_SOURCES} sources; this one has ${n}.`);
    return;
  }
  replaceExplorer(input, true);
}
