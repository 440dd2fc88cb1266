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

import { fieldMessages, request } from "../shared/http.js";
import { getLimits } from "../shared/limits.js";

/** POST `data` as JSON to /api/block<path> ("" for the walk, "/study"): {ok, status, body}. */
const post = (path, data) => request(`/api/block${path}`, { method: "POST", body: data });

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
let inFlight = false;
let waiting = null;
let studyQueue = Promise.resolve();
let settledWaiters = []; // study actions waiting for the walk of the newest edit

/** Resolves once no walk request is outstanding: block.request is then the block the learner sees. */
function settled() {
  return inFlight ? new Promise((resolve) => settledWaiters.push(resolve)) : Promise.resolve();
}

function wakeSettled() {
  const waiters = settledWaiters;
  settledWaiters = [];
  for (const resolve of waiters) resolve();
}

export function getBlock() {
  return block;
}

export function subscribeBlock(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

function emit() {
  document.documentElement.dataset.blockPending = inFlight || waiting ? "1" : "0";
  for (const fn of subscribers) fn(block);
}

/** The request a view starts from: the newest asked for, deep-copied. */
function base() {
  return structuredClone(block.requested || block.request);
}

/** Ask for the walk of `request` merged with `partial` ({norm}, {positions}, {heads_on}, {x}, {weights}). */
export function setBlock(partial) {
  const next = { ...base(), ...structuredClone(partial) };
  waiting = next;
  block.requested = next;
  if (!inFlight) pump();
  else emit();
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

async function pump() {
  while (waiting) {
    const job = waiting;
    waiting = null;
    inFlight = true;
    emit();
    let answer;
    try {
      answer = await post("", job);
    } catch {
      inFlight = false;
      block.offline = true;
      if (!waiting) block.requested = block.request;
      emit();
      wakeSettled();
      return;
    }
    inFlight = false;
    block.offline = false;
    if (answer.ok) {
      block.request = job;
      block.answer = answer.body;
      block.errors = {};
    } else {
      block.errors = fieldMessages(answer);
    }
    if (!waiting) block.requested = block.request; // refused: the controls show the last good request again
    emit();
  }
  wakeSettled();
}

/**
 * Apply one study action ({kind: "open" | "submit" | "help" ...}) for the block's challenges.
 * It waits for the walk of any edit still on its way, so a Check judges the block the learner set.
 */
export function blockStudy(action) {
  studyQueue = studyQueue
    .then(async () => {
      await settled();
      const answer = await post("/study", { block: block.request, study: block.study, action });
      if (answer.ok) {
        block.study = answer.body.study;
        block.history = answer.body.history;
        if (answer.body.answer && action.challenge) block.revealed = { ...block.revealed, [action.challenge]: answer.body.answer };
        block.studyMessage = "";
      } else {
        block.studyMessage = Object.values(fieldMessages(answer)).join(" ");
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
  const [example, limits] = await Promise.all([request("/api/block/example"), getLimits().catch(() => null)]);
  block.limits = limits;
  if (!example.ok) {
    block.offline = true;
    emit();
    return;
  }
  block.example = example.body;
  const ex = example.body;
  block.request = { x: ex.x, weights: ex.weights, norm: ex.norm, positions: ex.positions, heads_on: ex.heads_on };
  setBlock({});
  const practice = await request("/api/block/practice");
  if (practice.ok) block.practice = practice.body;
  emit();
}
