// The block section's one state object and its link to the server.
//
// block = {
//   example:  GET /api/block/example (what Reset restores)
//   request:  the last BlockRequest the server accepted {x, weights, norm, positions, heads_on}
//   requested: the newest BlockRequest asked for (equals `request` once answered or refused)
//   answer:   the server's walk for `request` (BlockResponse, docs/block-api.md)
//   errors:   {field: message} from a refused request, by the server's field path
//             ("weights.heads[1].w_q[2][0]", "x[0][3]"); the last good walk stays
//   limits:   GET /api/limits (the editor's hint states the largest number), null if it failed
//   practice: GET /api/block/practice; study/history: the block part's study (POST /api/block/study)
//   revealed: {challenge id: answer text} shown after "Show the answer"
//   step:     the stepper's step index (0 .. 7)
//   offline:  the server could not be reached
// }
// Views never change `block` directly: they call the actions below and redraw
// from subscribeBlock(). Walk requests run one at a time; a newer one replaces
// any that waits, so a slow answer never queues stale states.

import { ApiError, fieldMessages, getJSON, postJSON } from "../shared/http.js";
import { getLimits } from "../shared/limits.js";
import { newest } from "../shared/newest.js";

/** POST `data` as JSON to /api/block<path> ("" for the walk, "/study"): the answer, or an ApiError. */
const post = (path, data) => postJSON(`/api/block${path}`, data);

const block = {
  example: null,
  request: null,
  requested: null,
  answer: null,
  errors: {},
  limits: null,
  practice: null,
  study: { version: 1, active: null, before: [], challenges: {} },
  history: [],
  studyMessage: "",
  revealed: {},
  step: 0,
  offline: false,
};
const subscribers = new Set();
let studyQueue = Promise.resolve();

// Walk requests: one in flight, the newest waits (a newer one replaces any that waits).
const line = newest({
  send: (job) => post("", job),
  take(job, answer, error) {
    const offline = error && !(error instanceof ApiError);
    block.offline = Boolean(offline);
    if (error && !offline) block.errors = fieldMessages(error);
    else if (!error) Object.assign(block, { request: job, answer, errors: {} });
    // refused or offline: the controls show the last good request again
    if (line.waiting() === null) block.requested = block.request;
    emit();
    return !offline;
  },
  changed: markPending,
});

export function getBlock() {
  return block;
}

export function subscribeBlock(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

/** Call every subscriber with the block as it is (views mounted after an answer draw it). */
export function redrawBlock() {
  emit();
}

/** Resolves once the first walk is in (block.answer holds it, and its words). */
export function firstAnswer() {
  if (block.answer) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = subscribeBlock((b) => {
      if (!b.answer) return;
      stop();
      resolve();
    });
  });
}

function markPending() {
  document.documentElement.dataset.blockPending = line.busy() ? "1" : "0";
}

function emit() {
  markPending();
  for (const fn of subscribers) fn(block);
}

/** The request a view starts from: the newest asked for, deep-copied. */
function base() {
  return structuredClone(block.requested || block.request);
}

/** Ask for the walk of `request` merged with `partial` ({norm}, {positions}, {heads_on}, {x}, {weights}). */
export function setBlock(partial) {
  const next = { ...base(), ...structuredClone(partial) };
  block.requested = next;
  line.ask(next);
  emit();
}

/** Set one number of the request at `path` (["weights", "heads", 1, "w_q", 2, 0]). */
export function setNumber(path, value) {
  const next = base();
  let at = next;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1]] = value;
  setBlock(next);
}

/** Show a browser-side message next to `field` (a number that could not be read). */
export function setBlockError(field, message) {
  block.errors = { ...block.errors, [field]: message };
  emit();
}

/** Reset: the given X and weights, pre-norm, no positions, both heads on. */
export function resetBlock() {
  const ex = block.example;
  block.errors = {};
  setBlock({ x: ex.x, weights: ex.weights, norm: ex.norm, positions: ex.positions, heads_on: ex.heads_on });
}

export function setStep(index) {
  block.step = Math.max(0, Math.min(index, (block.answer ? block.answer.steps.length : 8) - 1));
  emit();
}

/**
 * Apply one study action ({kind: "open" | "submit" | "help" ...}) for the block's challenges.
 * It waits for the walk of any edit still on its way, so a Check judges the block the learner set.
 */
export function blockStudy(action) {
  studyQueue = studyQueue
    .then(async () => {
      await line.idle();
      try {
        const answer = await post("/study", { block: block.request, study: block.study, action });
        block.study = answer.study;
        block.history = answer.history;
        if (answer.answer && action.challenge) block.revealed = { ...block.revealed, [action.challenge]: answer.answer };
        block.studyMessage = "";
      } catch (error) {
        if (!(error instanceof ApiError)) throw error; // offline: the catch below says so
        block.studyMessage = error.message; // the server's messages, one a line
      }
      emit();
    })
    .catch(() => {
      block.offline = true;
      emit();
    });
  return studyQueue;
}

/** Load the example, the practice and the first walk. */
export async function startBlock() {
  const [example, limits] = await Promise.all([getJSON("/api/block/example").catch(() => null), getLimits().catch(() => null)]);
  block.limits = limits;
  if (!example) {
    block.offline = true;
    emit();
    return;
  }
  block.example = example;
  const ex = example;
  block.request = { x: ex.x, weights: ex.weights, norm: ex.norm, positions: ex.positions, heads_on: ex.heads_on };
  setBlock({});
  block.practice = await getJSON("/api/block/practice").catch(() => block.practice);
  emit();
}
