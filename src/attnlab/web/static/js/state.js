// The explorer's one state object, its updates and its link to the server.
//
// state = {
//   input:     the last explorer state the server accepted, {q, keys, values, labels, allowed, scale}
//   requested: the newest state asked for (equals `input` once its answer is in)
//   result:    the server's answer for `input` (trace, display, words, compare, python, geometry, challenge)
//   example:   GET /api/example ({state, reset})
//   fieldErrors: {"q[0]": "message", ...} inline messages, by field path
//   connection: "starting" | "ok" | "offline"
//   ui:        {rowLabel, texts} texts other parts drive (part 2 sets the row label and
//              texts = {row, given, q_legend, allowed, example}, the sentences that say
//              whether the row shown is masked; null keeps the page's unmasked wording)
//   detached:  true while the explorer shows an example of its own (loadExample),
//              not a row of the held A/B/C sequence; Reset example ends it
// }
//
// Views never change `state` directly: they call setExplorer / setFieldError /
// setUi, and redraw from subscribe(). At most one request is in flight; a newer
// request replaces any pending one, so a slow answer never queues stale states.
// The last good input is kept in sessionStorage (per visit, per tab).

import { getExample, postState, postTrace } from "./api.js";
import { toJson } from "./json.js";
import { readLink, writeLink } from "./link.js";
import { MAX_OWN_SOURCES, loadExample } from "./example.js";
import { editsFor } from "./heldedits.js";
import { measure } from "./timing.js";

const STORAGE_KEY = "attnlab.explorer.v1";
const RETRY_MS = 2000;

const state = {
  input: null,
  requested: null,
  result: null,
  example: null,
  fieldErrors: {},
  connection: "starting",
  ui: { rowLabel: "Row 0 (A) · unmasked projection.", texts: null },
  detached: false,
};

const subscribers = new Set();
let inFlight = false;
let pending = null; // {input, marks}
let retryTimer = null;

/** The whole state; treat it as read-only. */
export function getState() {
  return state;
}

/** A copy of the newest explorer input (what the page shows or is about to). */
export function getExplorer() {
  return structuredClone(state.requested || state.input);
}

/**
 * Call fn(state) after every change; returns a function that unsubscribes.
 * @param {(state: object) => void} fn
 */
export function subscribe(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

function emit() {
  for (const fn of subscribers) fn(state);
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
  request(input, options.marks || [], options.detach);
}

export { MAX_OWN_SOURCES, loadExample };

/** Replace the explorer's whole input; `detach` says whether it leaves the held sequence. */
export function replaceExplorer(input, detach) {
  state.fieldErrors = {};
  state.requested = structuredClone(input);
  request(state.requested, [], detach);
}

/** Change page texts such as the explorer's row label ({rowLabel, texts}). */
export function setUi(partial) {
  state.ui = { ...state.ui, ...partial };
  emit();
}

/** Show `message` next to field `path` (e.g. "values[1][0]"); keeps the state. */
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

// The held example's link (nbstate.js registers it): while the explorer shows a
// held row, each state is one POST /api/state carrying the held example and the
// edits that turn it into the explorer's newest input, and its one answer
// updates both views. {getHeld() -> held | null, onView(view), onRefused(answer)}
let held = null;

/** Connect the held example (see `held` above); called once by nbstate.js. */
export function connectHeld(link) {
  held = link;
}

/**
 * Apply one held-example edit ({kind: "mask" | "select" | ...}) in the same
 * queue as the explorer's moves: one request answers both views.
 */
export function editHeldState(edit) {
  const base = state.requested || state.input;
  request(structuredClone(base), [], undefined, [edit]);
}

function request(input, marks, detach, edits = []) {
  if (pending) marks = pending.marks.concat(marks); // keep the replaced moves' marks
  if (pending && detach === undefined) detach = pending.detach;
  if (pending) edits = pending.edits.concat(edits); // a held edit is never dropped
  pending = { input, marks, detach, edits };
  if (!inFlight) pump();
}

async function pump() {
  while (pending) {
    const job = pending;
    pending = null;
    inFlight = true;
    markPending();
    let answer;
    const h = held && !(job.detach ?? state.detached) ? held.getHeld() : null;
    const derived = h ? editsFor(job.input, h) : null;
    const asState = derived !== null;
    try {
      answer = asState
        ? await postState({ held: h, edits: derived.concat(job.edits) })
        : await postTrace(job.input);
    } catch {
      inFlight = false;
      offline(job);
      return;
    }
    inFlight = false;
    markPending();
    if (answer.ok && asState) {
      if (job.detach !== undefined) state.detached = job.detach;
      held.onView(answer.body.sequence);
      const t = answer.body.explorer.trace;
      accept({ q: t.q, keys: t.keys, values: t.values, labels: t.labels, allowed: t.allowed, scale: null }, answer.body.explorer);
      emit();
      measure(job.marks);
    } else if (!answer.ok && asState && job.edits.length && answer.status === 422) {
      // A held edit refused (e.g. a mask row left empty): say so by the held table; nothing changed.
      if (!pending) state.requested = state.input;
      held.onRefused(answer);
      emit();
    } else if (answer.ok) {
      if (job.detach !== undefined) state.detached = job.detach;
      accept(job.input, answer.body);
      emit();
      measure(job.marks);
    } else if (!state.result) {
      // This visit's saved state is refused (e.g. an older format): start over from the example.
      reject(answer);
      try {
        sessionStorage.removeItem(STORAGE_KEY);
      } catch {
        // Storage disabled: nothing saved to drop.
      }
      if (state.example) accept(structuredClone(state.example.state), state.example.result);
      else state.input = state.requested = null; // start() accepts the example when it arrives
      emit();
    } else {
      reject(answer);
      emit();
    }
  }
}

function accept(input, result) {
  state.input = input;
  writeLink(state.detached ? input : null, "own"); // the share link carries an own example too
  if (!pending) state.requested = input;
  state.result = result;
  state.fieldErrors = {};
  state.connection = "ok";
  try {
    sessionStorage.setItem(STORAGE_KEY, toJson(input)); // keeps -0 across a reload
    sessionStorage.setItem(`${STORAGE_KEY}.detached`, state.detached ? "1" : "0");
  } catch {
    // Storage can be full or disabled; the page still works for this view.
  }
}

function reject(answer) {
  const errors = {};
  const detail = (answer.body && answer.body.detail) || [];
  for (const item of Array.isArray(detail) ? detail : []) {
    // A refused held edit made from the explorer's fields ("edits[0].q[1]") is
    // shown next to that field ("q[1]"), in the same words.
    const field = String(item.field || "body").replace(/^edits\[\d+\]\./, "");
    errors[field] = String(item.msg).startsWith(item.field) ? field + String(item.msg).slice(String(item.field).length) : item.msg;
  }
  if (!detail.length) errors.body = `The server refused this state (HTTP ${answer.status}).`;
  state.fieldErrors = errors;
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

function restore() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || "null");
    if (saved && Array.isArray(saved.q) && Array.isArray(saved.keys) && Array.isArray(saved.values)) {
      return saved;
    }
  } catch {
    // A damaged entry falls back to the worked example.
  }
  return null;
}

/** Load the example, restore this visit's state (or start from the example) and trace it. */
export async function start() {
  const own = readLink(location.hash, "own"); // before any answer rewrites the hash
  const saved = own ? null : restore();
  if (saved) {
    try {
      state.detached = sessionStorage.getItem(`${STORAGE_KEY}.detached`) === "1";
    } catch {
      // Storage disabled: nothing saved, so the example is the held row.
    }
    // This visit's state: trace it while the example (needed for Reset) loads.
    state.input = saved;
    state.requested = saved;
    request(saved, []);
  }
  try {
    state.example = await getExample();
  } catch {
    state.connection = "offline";
    emit();
    setTimeout(start, RETRY_MS);
    return;
  }
  if (!saved || state.requested === null) {
    // The example comes with its answer: the first numbers need no second round trip.
    if (own) state.detached = false;
    accept(structuredClone(state.example.state), state.example.result);
    emit();
  }
  if (own && own.damaged) setFieldError("link", "This link's own example is damaged, so it is not shown.");
  else if (own) loadExample(own.example); // the server validates it; a refusal says why
}
