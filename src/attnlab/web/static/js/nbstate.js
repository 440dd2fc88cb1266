// The notebook's state: the held A/B/C sequence (as the server's sequence
// view), the visit's study (attempts and help) and its history, and the
// messages the notebook views show. It also keeps the explorer above
// connected to the held example:
//
// - the explorer shows held.row, either masked (allowed = mask row) or as the
//   unmasked projection (all sources allowed); its label says which;
// - a query the learner sets in the explorer is row 0's query edit and brings
//   the explorer back to row 0's unmasked projection; a value edit is shared by
//   every row; the server applies these rules (POST /api/notebook/edit).
//
// nb = {view, study, history, practice, messages: {sequence, practice, export}, offline}
// Views call the exported actions and redraw from subscribeNb(). Requests run
// one at a time in order. The held example is kept in sessionStorage for this
// tab (like the explorer's state); the study is not: reloading clears it.

import { toJson } from "./json.js";
import { errorText, nbGet, nbPost } from "./nbapi.js";
import { getExplorer, getState, setExplorer, setUi, subscribe } from "./state.js";

const HELD_KEY = "attnlab.held.v1";

const nb = {
  view: null,
  study: { version: 1, active: null, before: [], challenges: {} },
  history: [],
  practice: null,
  messages: { sequence: "", practice: "", export: "" },
  offline: false,
};
const subscribers = new Set();
let queue = Promise.resolve();
let lastInput = null;

export function getNb() {
  return nb;
}

/** The held example (what the server's view says), or null before start. */
export function getHeld() {
  return nb.view ? nb.view.example : null;
}

export function subscribeNb(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

function emit() {
  for (const fn of subscribers) fn(nb);
}

/** Run `job` after every earlier notebook request; errors become an offline note. */
function enqueue(job) {
  queue = queue.then(job).catch(() => {
    nb.offline = true;
    emit();
  });
  return queue;
}

export function setMessage(area, message) {
  nb.messages = { ...nb.messages, [area]: message };
  emit();
}

function same(a, b) {
  return toJson(a) === toJson(b); // -0 differs from 0, as in the engine's inputs
}

/**
 * Take the server's view. `fields` are the explorer inputs to bring in line
 * with it: all of them after a notebook edit; only `allowed` after an edit
 * that came from the explorer itself, whose q and values are already the
 * learner's newest (pushing them back would undo a drag still in progress).
 */
function accept(view, fields = ["q", "keys", "values", "labels", "allowed"]) {
  nb.view = view;
  nb.offline = false;
  try {
    sessionStorage.setItem(HELD_KEY, toJson(view.example));
  } catch {
    // Storage may be full or disabled; the page still works for this visit.
  }
  pushExplorer(fields);
}

/** Make the explorer show the held example's explorer row (only what differs). */
function pushExplorer(fields) {
  const t = nb.view.explorer.trace;
  const have = getExplorer() || {};
  const partial = {};
  for (const name of fields) {
    if (!same(have[name], t[name])) partial[name] = t[name];
  }
  if (Object.keys(partial).length) setExplorer(partial);
  setUi({ rowLabel: `${nb.view.explorer.label}.`, texts: nb.view.explorer.texts });
}

async function postEdit(held, edit) {
  const answer = await nbPost("edit", { held, edit });
  return answer;
}

/**
 * Apply one held-example edit ({kind: "mask" | "select" | ...}); a refusal
 * (e.g. a mask row left empty) shows in messages.sequence and changes nothing.
 */
export function editHeld(edit) {
  return enqueue(async () => {
    const answer = await postEdit(getHeld(), edit);
    if (answer.ok) {
      accept(answer.body);
      nb.messages = { ...nb.messages, sequence: "" };
    } else {
      nb.messages = { ...nb.messages, sequence: errorText(answer) };
    }
    emit();
  });
}

/** Replace the held example with an imported one (already validated by the server). */
export function adoptView(view) {
  return enqueue(async () => {
    accept(view);
    emit();
  });
}

let following = false;
let followRefused = false; // the held example refused the explorer's last input

/**
 * The explorer accepted a new state: turn a learner's query or value edit
 * into held edits. At most one such job waits in the queue; it reads the
 * newest accepted input when it runs, so a drag's many moves coalesce.
 */
function followExplorer(state) {
  if (!nb.view || !state.input || state.input === lastInput) return;
  if (state.requested !== state.input) return; // wait until the explorer settles
  lastInput = state.input;
  if (following) return;
  following = true;
  enqueue(async () => {
    following = false;
    const input = getState().input;
    let held = getHeld();
    let view = null;
    if (!same(input.q, held.queries[held.row])) {
      const answer = await postEdit(held, { kind: "query", q: input.q });
      if (!answer.ok) return refuseFollow(answer);
      view = answer.body;
      held = view.example;
    }
    if (!same(input.values, held.values)) {
      const answer = await postEdit(held, { kind: "values", values: input.values });
      if (!answer.ok) return refuseFollow(answer);
      view = answer.body;
    }
    if (view) accept(view, ["allowed"]);
    if (view || followRefused) {
      followRefused = false;
      nb.messages = { ...nb.messages, sequence: "" };
      emit();
    }
  });
}

/** The held example refused the explorer's newest input (e.g. a coordinate past ±1e6). */
function refuseFollow(answer) {
  const detail = answer.body && Array.isArray(answer.body.detail) ? answer.body.detail : [];
  const why = detail.length
    ? detail.map((d) => `${String(d.field).replace(/^(edit|held)\./, "")}: ${errorText({ body: { detail: [d] } })}`).join(" ")
    : errorText(answer);
  followRefused = true;
  nb.messages = { ...nb.messages, sequence: `The held sequence keeps its last numbers: ${why}` };
  emit();
}

/** Apply one study action ({kind: "open" | "submit" | "help" ...}) for this visit. */
export function studyAction(action) {
  return enqueue(async () => {
    if (!nb.view) return;
    const answer = await nbPost("study", { held: getHeld(), study: nb.study, action });
    if (answer.ok) {
      nb.study = answer.body.study;
      nb.history = answer.body.history;
      nb.messages = { ...nb.messages, practice: "" };
    } else {
      nb.messages = { ...nb.messages, practice: errorText(answer) };
    }
    emit();
  });
}

/** Record help used (a detour counts for the attempt the learner leaves). */
export function recordHelp(help, detail = null, challenge = null) {
  const action = { kind: "help", help };
  if (detail !== null) action.detail = detail;
  if (challenge !== null) action.challenge = challenge;
  return studyAction(action);
}

function restoreHeld() {
  try {
    return JSON.parse(sessionStorage.getItem(HELD_KEY) || "null");
  } catch {
    return null;
  }
}

/** Load the practice data and the held example, then connect to the explorer. */
export async function startNotebook() {
  const practice = await nbGet("practice");
  nb.practice = practice.body;
  const saved = restoreHeld();
  let answer = saved ? await nbPost("sequence", { held: saved }) : null;
  if (!answer || !answer.ok) answer = await nbGet("example");
  // Wait for the explorer's first answer, so its own start-up does not undo ours.
  await new Promise((resolve) => {
    if (getState().result) return resolve();
    const stop = subscribe((state) => {
      if (state.result) {
        stop();
        resolve();
      }
    });
  });
  // The explorer restored its own newest input for this tab: keep its q and
  // values (followExplorer turns any difference into held edits) and bring
  // only the mask row in line.
  accept(answer.body, ["allowed"]);
  subscribe(followExplorer);
  followExplorer(getState());
  emit();
}
