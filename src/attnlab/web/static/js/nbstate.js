// The notebook's state: the held A/B/C sequence (as the server's sequence
// view), the visit's study (attempts and help) and its history, and the
// messages the notebook views show. It also keeps the explorer above
// connected to the held example:
//
// - the explorer shows held.row, either masked (allowed = mask row) or as the
//   unmasked projection (all sources allowed); its label says which;
// - a query the learner sets in the explorer is row 0's query edit and brings
//   the explorer back to row 0's unmasked projection; a value edit is shared by
//   every row; the server applies these rules. Each state is ONE request,
//   POST /api/state (state.js's queue), whose answer draws both the explorer
//   and the held table: a settled drag or a mask click costs one request.
//
// nb = {view, study, history, practice, messages: {sequence, practice, export}, offline}
// Views call the exported actions and redraw from subscribeNb(). Requests run
// one at a time in order. The held example is kept in sessionStorage for this
// tab (like the explorer's state); the study is not: reloading clears it.

import { toJson } from "./json.js";
import { readLink, writeLink } from "./link.js";
import { errorText, nbGet, nbPost } from "./nbapi.js";
import { connectHeld, editHeldState, getExplorer, getState, setExplorer, setFieldError, setUi, subscribe } from "./state.js";

const HELD_KEY = "attnlab.held.v1";
// The explorer fields a held view sets; passing exactly this list to accept() also
// brings back a detached explorer (one showing an example of its own).
const ATTACH = ["q", "keys", "values", "labels", "allowed"];

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
function accept(view, fields = ATTACH) {
  nb.view = view;
  nb.offline = false;
  try {
    sessionStorage.setItem(HELD_KEY, toJson(view.example));
  } catch {
    // Storage may be full or disabled; the page still works for this visit.
  }
  writeLink(view.example); // the address bar always carries the example shown
  pushExplorer(fields);
}

/** Make the explorer show the held example's explorer row (only what differs). */
function pushExplorer(fields) {
  const t = nb.view.explorer.trace;
  setUi({ rowLabel: `${nb.view.explorer.label}.`, texts: nb.view.explorer.texts });
  if (getState().detached) {
    // The explorer shows an example of its own: only a held edit the learner makes
    // (a mask cell, "Show in the explorer") brings the held row back, whole.
    if (fields === ATTACH) setExplorer({ q: t.q, keys: t.keys, values: t.values, labels: t.labels, allowed: t.allowed, scale: null }, { detach: false });
    return;
  }
  const have = getExplorer() || {};
  const partial = {};
  for (const name of fields) {
    if (!same(have[name], t[name])) partial[name] = t[name];
  }
  if (Object.keys(partial).length) setExplorer(partial);
}


/**
 * Apply one held-example edit ({kind: "mask" | "select" | ...}). It goes in the
 * explorer's queue (state.js): one POST /api/state answers the held table and
 * the explorer together. A refusal (e.g. a mask row left empty) shows in
 * messages.sequence and changes nothing.
 */
export function editHeld(edit) {
  editHeldState(edit);
}

/**
 * The one answer for a state: the held view (the explorer takes its own part in
 * state.js). The view is taken at once, so the next request builds on it; the
 * held table is drawn after the explorer's frame, so a drag's numbers are not
 * held back by the table.
 */
let drawSoon = false;
function onView(view) {
  nb.view = view;
  nb.offline = false;
  nb.messages = { ...nb.messages, sequence: "" };
  if (drawSoon) return;
  drawSoon = true;
  requestAnimationFrame(() => setTimeout(drawHeld));
}

function drawHeld() {
  // While a drag's answers are still coming, the explorer has the main thread.
  if (document.documentElement.dataset.attnlabPending === "1") {
    setTimeout(drawHeld, 50);
    return;
  }
  drawSoon = false;
  const latest = nb.view;
  try {
    sessionStorage.setItem(HELD_KEY, toJson(latest.example));
  } catch {
    // Storage may be full or disabled; the page still works for this visit.
  }
  writeLink(latest.example);
  const label = `${latest.explorer.label}.`;
  const ui = getState().ui;
  if (ui.rowLabel !== label || toJson(ui.texts) !== toJson(latest.explorer.texts)) {
    setUi({ rowLabel: label, texts: latest.explorer.texts });
  }
  emit();
}

function onRefused(answer) {
  nb.messages = { ...nb.messages, sequence: errorText(answer) };
  emit();
}

/** Replace the held example with an imported one (already validated by the server). */
export function adoptView(view) {
  return enqueue(async () => {
    accept(view);
    emit();
  });
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

/** Restore an imported study and its history (already validated by the server). */
export function adoptStudy(study, history) {
  return enqueue(async () => {
    nb.study = study;
    nb.history = history;
    emit();
  });
}

/** Load the worked A/B/C example (the one every practice challenge names); the study stays. */
export function loadWorked() {
  return enqueue(async () => {
    const answer = await nbGet("example");
    if (!answer.ok) {
      nb.messages = { ...nb.messages, practice: errorText(answer) };
    } else {
      accept(answer.body);
      nb.messages = { ...nb.messages, sequence: "", practice: "" };
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
  // A share link wins over this tab's saved example; a bad link is explained
  // and the worked example shown instead.
  const link = readLink();
  let linkProblem = "";
  let answer = null;
  if (link && link.damaged) {
    linkProblem = "This link is damaged (its example cannot be read), so the worked example is shown instead.";
  } else if (link) {
    answer = await nbPost("sequence", { held: link.example });
    if (!answer.ok) {
      linkProblem = `This link's example cannot be opened: ${errorText(answer)} The worked example is shown instead.`;
      answer = await nbGet("example");
    }
  }
  const saved = link ? null : restoreHeld();
  if (!answer && saved) answer = await nbPost("sequence", { held: saved });
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
  // values (state.js turns any difference into held edits) and bring
  // only the mask row in line. A link (good or bad) sets every field.
  // With an own example in the link, the explorer shows that one: push nothing.
  const own = readLink(location.hash, "own");
  connectHeld({ getHeld, onView, onRefused });
  accept(answer.body, own ? [] : link ? undefined : ["allowed"]);
  if (linkProblem) {
    nb.messages = { ...nb.messages, sequence: linkProblem };
    setFieldError("link", linkProblem); // also in the banner at the top, where the learner starts
  }
  emit();
}
