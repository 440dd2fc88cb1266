// The page's one state object: the explorer, the held A/B/C example, its
// stepper, their updates and their link to the server. (The learner's record,
// study attempts and history, is other data and lives in notebook/state.js.)
//
// state = {
//   input:     the last explorer state the server accepted, {q, keys, values, labels, allowed, scale}
//   requested: the newest state asked for (equals `input` once its answer is in)
//   result:    the server's answer for `input` (trace, display, words, compare, python, geometry, challenge)
//   example:   GET /api/example ({state, reset, result, sequence, stepper})
//   held:      the held example's view (POST /api/state's `sequence`: example, rows, explorer row)
//   stepper:   the stepper's four steps for the held example's explorer row
//   heldMessage: why the last held edit or the link's example was refused ("" when none)
//   fieldErrors: {"q[0]": "message", ...} inline messages, by field path
//   connection: "starting" | "ok" | "offline"
//   ui:        {rowLabel, texts}: the row label and the sentences that say whether the
//              row shown is masked (lab/explorer_texts.py), set from `held`
//   detached:  true while the explorer shows an example of its own (loadExample),
//              not a row of the held A/B/C sequence; Reset example ends it
// }
//
// While the explorer shows a held row, each state is ONE request, POST /api/state
// ({held, edits}), whose one answer sets `held`, `stepper` and the explorer: a
// settled drag or a mask click costs one request. Views call setExplorer /
// editHeld / setFieldError and redraw from subscribe() (the explorer, at once) or
// subscribeSettled() (the rest). One request in flight; a newer one replaces any
// pending one. The last good input and the held example are kept in
// sessionStorage (per tab); statestart.js reads them, and the link, once at start.

import { postState, postTrace } from "./api.js";
import { writeLink } from "./link.js";
import { forget, save } from "./statesave.js";
import { errorText, fieldErrorsOf } from "../notebook/api.js";
import { stateBody } from "./heldedits.js";
import { measure } from "./timing.js";

export const STORAGE_KEY = "attnlab.explorer.v1";
export const HELD_KEY = "attnlab.held.v1";
const RETRY_MS = 2000;

const state = {
  input: null,
  requested: null,
  result: null,
  example: null,
  held: null,
  stepper: null,
  heldMessage: "",
  fieldErrors: {},
  connection: "starting",
  ui: { rowLabel: "Row 0 (A) · unmasked projection.", texts: null },
  detached: false,
};

const subscribers = new Set();
let inFlight = false;
let pending = null; // {input, marks, detach, edits, held}
let retryTimer = null;

/** The whole state; treat it as read-only. */
export function getState() {
  return state;
}

/** A copy of the newest explorer input (what the page shows or is about to). */
export function getExplorer() {
  return structuredClone(state.requested || state.input);
}

/** The held example (its view's `example`), or null before start. */
export function getHeld() {
  return state.held ? state.held.example : null;
}

/** Call fn(state) after every change; returns a function that unsubscribes. */
export function subscribe(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

export function emit() {
  for (const fn of subscribers) fn(state);
  settleSoon();
}

/**
 * Ask for a new explorer state: `partial` is merged over the newest input
 * ({q}, {values}, or a whole state from another part of the page).
 * `options.marks` are performance mark names to measure once drawn.
 */
export function setExplorer(partial, options = {}) {
  const base = state.requested || state.input;
  const input = { ...structuredClone(base), ...structuredClone(partial) };
  state.requested = input;
  request({ input, marks: options.marks || [], detach: options.detach });
}

/** Replace the explorer's whole input; `detach` says whether it leaves the held sequence. */
export function replaceExplorer(input, detach) {
  state.fieldErrors = {};
  state.requested = structuredClone(input);
  request({ input: state.requested, detach });
}

/**
 * Apply one held-example edit ({kind: "mask" | "select" | ...}) in the same
 * queue as the explorer's moves: one request answers both views. A held edit
 * connects a detached explorer again (it shows the held row the edit leaves).
 */
export function editHeld(edit) {
  request({ input: structuredClone(state.requested || state.input), detach: false, edits: [edit] });
}

/** Replace the held example (an import, or the worked example): the explorer shows its row. */
export function replaceHeld(example) {
  request({ input: structuredClone(state.requested || state.input), detach: false, held: example });
}

/** Show `message` next to field `path` (e.g. "values[1][0]"). */
export function setFieldError(path, message) {
  state.fieldErrors = { ...state.fieldErrors, [path]: message };
  emit();
}

export function clearFieldError(path) {
  if (!(path in state.fieldErrors)) return;
  const { [path]: _dropped, ...rest } = state.fieldErrors;
  state.fieldErrors = rest;
  emit();
}

/** "Reset example": restore the query and the first value's x coordinate only. */
export function resetExample() {
  // An example of the learner's own (or a loaded one): back to the worked example.
  if (state.detached) return replaceExplorer(state.example.state, false);
  const reset = state.example.reset;
  const current = getExplorer();
  const values = current.values.map((v) => v.slice());
  values[0][0] = reset.first_value_x;
  state.fieldErrors = {};
  setExplorer({ q: reset.q.slice(), values });
}

// <html data-attnlab-pending="1"> while an answer is outstanding: a hook for
// CSS (e.g. a progress cursor) and for tests that wait for the numbers to settle.
function markPending() {
  document.documentElement.dataset.attnlabPending = inFlight || pending ? "1" : "0";
}

/** Queue `job` ({input, marks?, detach?, edits?, held?}); a newer job merges over a pending one. */
export function request(job) {
  const next = { marks: [], edits: [], held: null, ...job };
  if (pending) {
    next.marks = pending.marks.concat(next.marks); // keep the replaced moves' marks
    if (next.detach === undefined) next.detach = pending.detach;
    next.edits = pending.edits.concat(next.edits); // a held edit is never dropped
    next.held = next.held || pending.held;
  }
  pending = next;
  if (!inFlight) pump();
}

async function pump() {
  while (pending) {
    const job = pending;
    pending = null;
    inFlight = true;
    markPending();
    const body = stateBody(job, getHeld(), state.detached);
    let answer;
    try {
      answer = body ? await postState(body) : await postTrace(job.input);
    } catch {
      inFlight = false;
      offline(job);
      return;
    }
    inFlight = false;
    markPending();
    if (answer.ok && body) {
      state.detached = false;
      takeStateAnswer(answer.body);
      emit();
      measure(job.marks);
    } else if (!answer.ok && body && (job.edits.length || job.held) && answer.status === 422) {
      // A held edit refused (e.g. a mask row left empty): say so by the held table; nothing changed.
      if (!pending) state.requested = state.input;
      state.heldMessage = errorText(answer);
      emit();
    } else if (answer.ok) {
      if (job.detach !== undefined) state.detached = job.detach;
      accept(job.input, answer.body);
      emit();
      measure(job.marks);
    } else if (!state.result) {
      // This visit's saved state is refused (e.g. an older format): start over from the example.
      reject(answer);
      forget(STORAGE_KEY);
      if (state.example) accept(structuredClone(state.example.state), state.example.result);
      emit();
    } else {
      reject(answer);
      emit();
    }
  }
}

/**
 * Take one POST /api/state answer ({sequence, explorer, stepper}): the held
 * example, its stepper and the explorer's row, all at once.
 */
export function takeStateAnswer(body) {
  state.held = body.sequence;
  state.stepper = body.stepper;
  state.heldMessage = "";
  state.ui = { rowLabel: `${body.sequence.explorer.label}.`, texts: body.sequence.explorer.texts };
  markPending(); // at start, the first answer comes from here, not from pump()
  if (!pointerDown) saveHeld();
  const t = body.explorer.trace;
  accept({ q: t.q, keys: t.keys, values: t.values, labels: t.labels, allowed: t.allowed, scale: null }, body.explorer);
}

// Work that can wait until the numbers settle: the held example in the address
// bar and this tab's storage (history.replaceState is slow), then the views of
// subscribeSettled (the held table, the stepper, practice). During a pointer drag
// it runs SETTLE_MS after the last change, else right after the change's frame;
// never with an answer outstanding, so a drag's frames carry only the explorer.
const SETTLE_MS = 100;
const settledSubscribers = new Set();
let settleToken = 0;
let savedHeld = null;

/** Call fn(state) once the numbers settle after a change; returns a function that unsubscribes. */
export function subscribeSettled(fn) {
  settledSubscribers.add(fn);
  return () => settledSubscribers.delete(fn);
}

function settleSoon() {
  const token = ++settleToken; // only the newest call runs
  const run = () => token === settleToken && settled();
  if (pointerDown) setTimeout(run, SETTLE_MS);
  else requestAnimationFrame(() => setTimeout(run)); // a key press or click: right after its frame
}

function settled() {
  if (inFlight || pending) return settleSoon();
  saveHeld();
  for (const fn of settledSubscribers) fn(state);
}

// While a pointer is down (a drag: up to 60 answers a second, and Chrome throttles
// history.replaceState) the held example is written once the numbers settle;
// a key press or a click writes it at once, so a reload right after finds it.
let pointerDown = false;
addEventListener("pointerdown", () => (pointerDown = true), true);
addEventListener("pointerup", () => (pointerDown = false), true);
addEventListener("pointercancel", () => (pointerDown = false), true);
addEventListener("pagehide", () => saveHeld());

function saveHeld() {
  if (!state.held || state.held === savedHeld) return;
  savedHeld = state.held;
  save(HELD_KEY, state.held.example);
  writeLink(state.held.example); // the address bar always carries the held example
}

function accept(input, result) {
  state.input = input;
  writeLink(state.detached ? input : null, "own"); // the share link carries an own example too
  if (!pending) state.requested = input;
  state.result = result;
  state.fieldErrors = {};
  state.connection = "ok";
  save(STORAGE_KEY, input); // toJson keeps -0 across a reload
  save(`${STORAGE_KEY}.detached`, state.detached ? 1 : 0);
}

function reject(answer) {
  state.fieldErrors = fieldErrorsOf(answer);
  if (!pending) state.requested = state.input; // keep the last good state
  state.connection = "ok";
}

function offline(job) {
  state.connection = "offline";
  if (!pending) pending = job; // retry the newest state once the server is back
  emit();
  clearTimeout(retryTimer);
  retryTimer = setTimeout(() => {
    if (pending && !inFlight) pump();
  }, RETRY_MS);
}
