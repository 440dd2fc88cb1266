// The page's one state: the held example, the only example the page has (the
// A/B/C sequence, or an example of one query: the learner's own, a head's row),
// and what its last answer drew. (The learner's record, study attempts and
// history, is other data and lives in notebook/state.js.)
//
// state = {
//   held:      the held example's view (POST /api/state's `sequence`; held.example IS the state)
//   stepper:   the stepper's four steps for the explorer's row
//   result:    the explorer's answer for that row (trace, display, words, compare, python, geometry, challenge)
//   input:     the explorer's row as inputs {q, keys, values, labels, allowed, scale}, read off `result`
//   requested: `input` with the edits still on their way (what the next move starts from)
//   example:   GET /api/example: the worked example's whole answer (the page's first)
//   heldMessages: why the last held-table edit or the link's example was refused ([] when none)
//   linkMessages: why the address bar's link could not be opened ([] when it could): the banner's
//   fieldErrors: {"q[0]": "message", ...} inline messages, by field path
//   connection: "starting" | "ok" | "offline"
//   ui:        {rowLabel, texts}: the row label and the sentences about the row shown, from `held`
// }
//
// Every interaction is one edit of the held example ({kind: "query" | "values" |
// "mask" | "select" | "reset"}, lab/explorer/sequence.py), or a whole new held
// example (the worked one, an import, an own example); each state is ONE
// request, POST /api/state {held, edits} (over the drag socket when it is open),
// whose one answer draws every view. One request in flight; newer edits wait and
// go together (a drag's moves collapse into its newest q). Views call setExplorer /
// editHeld / replaceHeld and redraw from subscribe() (the explorer, at once) or
// subscribeSettled() (the rest). The held example is kept in the address bar and
// in sessionStorage (per tab); statestart.js reads them once at start.

import { fieldErrorsOf, postState } from "./api.js";
import { writeLink } from "./link.js";
import { save } from "./statesave.js";
import { ApiError } from "../shared/http.js";
import { newest } from "../shared/newest.js";
import { measure } from "./timing.js";

export const HELD_KEY = "attnlab.held.v1";
const RETRY_MS = 2000;
const MAX_EDITS = 4; // per request (the server's limit)
const FIELD_EDITS = new Set(["query", "values", "value", "reset"]); // refused next to the explorer's fields

const state = {
  held: null,
  stepper: null,
  result: null,
  input: null,
  requested: null,
  example: null,
  heldMessages: [],
  linkMessages: [],
  fieldErrors: {},
  connection: "starting",
  ui: { rowLabel: "", texts: null },
};

const subscribers = new Set();
let retryTimer = null;
const NOTHING_HELD = new Error("no held example yet"); // an edit before the first answer is dropped

// A job: {base: a held example to replace the state with, or null; origin; edits; marks}.
const line = newest({
  send(job) {
    const held = job.base || getHeld();
    return held ? postState({ held, edits: job.edits }) : Promise.reject(NOTHING_HELD);
  },
  take(job, answer, error) {
    if (error === NOTHING_HELD) return false;
    if (error && !(error instanceof ApiError)) return offline(job);
    if (error) refuse(job, error);
    else takeStateAnswer(answer);
    emit();
    if (!error) measure(job.marks);
  },
  merge: mergeJobs,
  split(job) {
    if (job.edits.length <= MAX_EDITS) return [job, null];
    // the rest go next, from this answer's held example
    return [{ ...job, edits: job.edits.slice(0, MAX_EDITS) }, { base: null, origin: "held", edits: job.edits.slice(MAX_EDITS), marks: [] }];
  },
  changed: markPending,
});

/** The whole state; treat it as read-only. */
export function getState() {
  return state;
}

/** A copy of the newest explorer input (what the page shows or is about to). */
export function getExplorer() {
  return structuredClone(state.requested || state.input);
}

/** The held example (the one state), or null before start. */
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
 * Move the explorer: `partial` is {q} (a query edit: row 0's query, the lab's
 * rule) or {values}. `options.marks` are performance mark names to measure once drawn.
 */
export function setExplorer(partial, options = {}) {
  state.requested = { ...getExplorer(), ...structuredClone(partial) };
  if ("q" in partial) request({ edits: [{ kind: "query", q: partial.q }], marks: options.marks });
  if ("values" in partial) request({ edits: [{ kind: "values", values: partial.values }], marks: options.marks });
}

/** Apply one edit of the held example ({kind: "mask" | "select" | ...}) in the same queue. */
export function editHeld(edit) {
  request({ edits: [edit] });
}

/**
 * Replace the whole example with `example` (a held example: the worked one, an
 * import, an own example). `origin` "own" puts a refusal next to the own
 * example's fields; otherwise it shows by the held table.
 */
export function replaceHeld(example, origin = "held") {
  state.fieldErrors = {};
  state.requested = rowOf(example);
  request({ base: structuredClone(example), origin });
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

/** "Reset example": the lab's reset edit (row 0's query and the first value's x; an own example: the worked one). */
export function resetExample() {
  state.fieldErrors = {};
  request({ edits: [{ kind: "reset" }] });
}

// <html data-attnlab-pending="1"> while an answer is outstanding: a hook for
// CSS (e.g. a progress cursor) and for tests that wait for the numbers to settle.
function markPending() {
  document.documentElement.dataset.attnlabPending = line.busy() ? "1" : "0";
}

/** The explorer's row of a held example as inputs (shown until its answer comes). */
function rowOf(example) {
  const r = example.row || 0;
  const shown = example.masked || example.queries.length === 1;
  return {
    q: example.queries[r],
    keys: example.keys,
    values: example.values,
    labels: example.labels,
    allowed: shown ? example.mask[r] : example.labels.map(() => true),
    scale: example.scale ?? null,
  };
}

/** Add `edit` to `edits`; a query or values edit right after one of its kind replaces it. */
function pushEdit(edits, edit) {
  const last = edits[edits.length - 1];
  if (last && last.kind === edit.kind && (edit.kind === "query" || edit.kind === "values")) edits[edits.length - 1] = edit;
  else edits.push(edit);
}

/** `older` with `job` ({base?, origin?, edits?, marks?}) after it: a new example drops the edits before it. */
function mergeJobs(older, job) {
  const next = { ...older, edits: older.edits.slice() };
  if (job.base) Object.assign(next, { base: job.base, origin: job.origin || "held", edits: [] });
  for (const edit of job.edits || []) pushEdit(next.edits, edit);
  next.marks = older.marks.concat(job.marks || []); // keep the replaced moves' marks
  return next;
}

/** Queue `job` ({base?, origin?, edits?, marks?}); it waits, merged, while an answer is on its way. */
export function request(job) {
  line.ask(mergeJobs({ base: null, origin: "held", edits: [], marks: [] }, job));
}

/** Say why `job` was refused (an ApiError): by the explorer's (or the own example's) fields, or by the held table. */
function refuse(job, error) {
  state.connection = "ok";
  if (line.waiting() === null) state.requested = state.input; // keep the last good state
  const first = error.fields[0];
  const loc = first && Array.isArray(first.loc) ? first.loc : [];
  const edit = loc[1] === "edits" && typeof loc[2] === "number" ? job.edits[loc[2]] : null;
  if (edit && FIELD_EDITS.has(edit.kind)) {
    state.fieldErrors = fieldErrorsOf(error);
  } else if (!edit && job.base && job.origin === "own") {
    state.fieldErrors = ownFieldErrors(fieldErrorsOf(error));
  } else {
    state.heldMessages = error.messages;
  }
}

/** "held.keys[2][0]" -> "keys[2][0]"; the one query "held.queries[0][1]" -> "q[1]"; its mask -> "allowed". */
function ownFieldErrors(errors) {
  const out = {};
  for (const [field, message] of Object.entries(errors)) {
    const path = field.replace(/^held\./, "").replace(/^queries\[0\]/, "q").replace(/^mask\[0\]/, "allowed");
    out[path] = message;
  }
  return out;
}

/**
 * Take one POST /api/state answer ({sequence, explorer, stepper}): the held
 * example, its stepper and the explorer's row, all at once.
 */
export function takeStateAnswer(body) {
  state.held = body.sequence;
  state.stepper = body.stepper;
  state.heldMessages = [];
  state.linkMessages = [];
  state.ui = { rowLabel: body.sequence.explorer.heading.text, texts: body.sequence.explorer.texts };
  const t = body.explorer.trace;
  state.input = { q: t.q, keys: t.keys, values: t.values, labels: t.labels, allowed: t.allowed, scale: t.scale };
  if (line.waiting() === null) state.requested = state.input;
  state.result = body.explorer;
  state.fieldErrors = {};
  state.connection = "ok";
  markPending(); // at start, the first answer comes from here, not from the line
  if (!pointerDown) saveHeld();
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
  if (line.busy()) return settleSoon();
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
  writeLink(state.held.example); // the address bar always carries the one state
  writeLink(null, "own"); // an older link's own example is now the held example itself
}

/** The server could not be reached: `job` waits (unless a newer one does) and goes again in RETRY_MS. */
function offline(job) {
  state.connection = "offline";
  line.keep(job); // retry the newest state once the server is back
  emit();
  clearTimeout(retryTimer);
  retryTimer = setTimeout(line.resume, RETRY_MS);
  return false;
}
