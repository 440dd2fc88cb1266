// The learner's record: this visit's study (attempts, checks and help), its
// history, the practice data, and the messages of the practice and export
// views. It is other data than the example: the held example, its stepper and
// the explorer are the page's one state (explorer/state.js), and this module never
// holds a copy of them. getHeld() reads explorer/state.js.
//
// nb = {study, history, practice, messages: {practice: [lines], export: [lines]}, offline}
// Views call the exported actions and redraw from subscribeNb(). Study
// requests run one at a time in order. The study is not saved: reloading clears it.
//
// subscribeNb() also tells the notebook's views (held table, stepper, practice)
// when explorer/state.js's held example changes, once the numbers settle
// (subscribeSettled): a drag's frames carry only the explorer, and the held
// table draws the newest held example once the drag pauses.

import { ApiError, getJSON, postJSON } from "../shared/http.js";
import { getHeld, getState, replaceHeld, subscribeSettled } from "../explorer/state.js";

export { getHeld };

const nb = {
  study: { version: 1, active: null, before: [], challenges: {} },
  history: [],
  practice: null,
  messages: { practice: [], export: [] },
  offline: false,
};
const subscribers = new Set();
let queue = Promise.resolve();

export function getNb() {
  return nb;
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

// --- the held example's changes, drawn once the numbers settle -------------------

let drawn = { held: undefined, messages: undefined };

subscribeSettled((state) => {
  if (state.held === drawn.held && state.heldMessages === drawn.messages) return;
  drawn = { held: state.held, messages: state.heldMessages };
  emit();
});

/** Replace the held example with an imported one (already validated by the server). */
export function adoptView(view) {
  replaceHeld(view.example);
}

/** Apply one study action ({kind: "open" | "submit" | "help" ...}) for this visit. */
export function studyAction(action) {
  return enqueue(async () => {
    if (!getHeld()) return;
    try {
      const answer = await postJSON("/api/notebook/study", { held: getHeld(), study: nb.study, action });
      nb.study = answer.study;
      nb.history = answer.history;
      nb.messages = { ...nb.messages, practice: [] };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error; // offline: enqueue says so
      nb.messages = { ...nb.messages, practice: error.messages };
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
  const example = getState().example;
  if (example) replaceHeld(example.sequence.example); // the first answer's: the page keeps no copy
  nb.messages = { ...nb.messages, practice: [] };
  emit();
}

/** Record help used (a detour counts for the attempt the learner leaves). */
export function recordHelp(help, detail = null, challenge = null) {
  const action = { kind: "help", help };
  if (detail !== null) action.detail = detail;
  if (challenge !== null) action.challenge = challenge;
  return studyAction(action);
}

/** Load the practice data (the held example is explorer/state.js's: explorer/statestart.js loads it). */
export async function startNotebook() {
  nb.practice = await getJSON("/api/notebook/practice");
  emit();
}
