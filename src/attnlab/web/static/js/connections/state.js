// One connection lab's page state: the learner's inputs, the lab's last answer, the study.
// Inputs change from the controls; one request is in flight at a time and a drag's waiting
// changes collapse into the newest inputs. Every answer replaces the address bar's link with
// the lab's own (shareable). The study goes to POST …/study, which applies the action with
// lab.study's rules and answers the new study and its history. <html data-cx-pending> counts
// the requests outstanding (tests wait for "0"). A lab with a model part says whether its model
// numbers are in (answer.live; <html data-cx-live>): while a run waits, the page asks again.

import { ApiError, fieldMessages, getJSON, postJSON } from "../shared/http.js";
import { newest } from "../shared/newest.js";
import { pageWords } from "../shared/words.js";

const state = {
  name: "",
  inputs: {}, // control name -> value as the page holds it (text from a control, or the answer's)
  answer: null,
  errors: {}, // control name -> the lab's message
  problem: "",
  study: { version: 1, active: null, before: [], challenges: {} },
  history: [],
  revealed: {},
  studyMessage: "",
};
const listeners = [];
let poll = null; // a model run the answer waits for: ask again after the answer's poll_ms

function pending(delta) {
  const root = document.documentElement;
  root.dataset.cxPending = String(Number(root.dataset.cxPending || "0") + delta);
}

function notify() {
  for (const fn of listeners) fn(state);
}

export function subscribe(fn) {
  listeners.push(fn);
}

export function getState() {
  return state;
}

function query() {
  return new URLSearchParams(Object.entries(state.inputs).map(([k, v]) => [k, String(v)])).toString();
}

let lineCounted = false; // whether the line is in <html data-cx-pending>'s count

// The answer's requests: one in flight; changes made meanwhile wait as one (the inputs are read when it goes).
const line = newest({
  send: () => getJSON(`/api/connections/${state.name}?${query()}`),
  take(_job, answer, error) {
    if (!error) {
      state.answer = answer;
      state.errors = {};
      state.problem = "";
      if (line.waiting() === null) state.inputs = { ...answer.inputs };
      history.replaceState(null, "", answer.link);
      document.documentElement.dataset.cxLive = answer.live ? answer.live.status : "none";
      clearTimeout(poll);
      if (answer.live && answer.live.poll_ms) poll = setTimeout(fetchAnswer, answer.live.poll_ms);
    } else if (error instanceof ApiError) {
      state.errors = fieldMessages(error);
      state.problem = state.errors.body || "";
    } else {
      state.problem = pageWords().connections.offline; // the server could not be reached
    }
    notify();
  },
  changed() {
    const busy = line.busy();
    if (busy !== lineCounted) pending(busy ? 1 : -1);
    lineCounted = busy;
  },
});

function fetchAnswer() {
  line.ask({});
}

/** Start lab `name` from the link's own inputs (`params`: URLSearchParams). */
export function start(name, params) {
  state.name = name;
  state.inputs = Object.fromEntries(params.entries());
  fetchAnswer();
}

/** The learner changed some controls: `changes` maps each one's name to its new value. */
export function setInputs(changes) {
  state.inputs = { ...state.inputs, ...changes };
  fetchAnswer();
}

// Study actions go one at a time, in order: each is sent with the study the one before returned, so
// two quick ones (opening the numbers, then the Python) are both kept (sent together, the second's
// answer replaced the first's).
let studies = Promise.resolve();

/** Apply one practice or help action; the server checks a submit on the inputs the answer holds. */
export function studyAction(action) {
  if (!state.answer) return Promise.resolve();
  pending(1);
  const done = studies.then(() => sendStudy(action)).finally(() => pending(-1));
  studies = done.catch(() => {});
  return done;
}

async function sendStudy(action) {
  try {
    const out = await postJSON(`/api/connections/${state.name}/study`, { inputs: state.answer.inputs, study: state.study, action });
    state.study = out.study;
    state.history = out.history;
    state.studyMessage = "";
    if (out.answer && action.challenge) state.revealed = { ...state.revealed, [action.challenge]: out.answer };
  } catch (error) {
    state.studyMessage = error.message;
  }
  notify();
}

/** POST the export of kind `kind` ("json" or "markdown") and return the response's text. */
export async function exportText(kind) {
  return postJSON(`/api/connections/${state.name}/export/${kind}`, { inputs: state.answer.inputs, study: state.study }, { text: true });
}
