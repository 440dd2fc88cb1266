// The page's start, in one place and one order, so nothing at start-up can race:
//
// 1. read the link (#example=…, and an older link's &own=…) and this tab's saved
//    held example ONCE, before any answer rewrites the address bar;
// 2. GET /api/example: the worked example's whole answer (explorer, held view
//    and stepper);
// 3. the held example to start from: the link's (an older link's own example
//    first: it was what its explorer showed), else this tab's saved one, else the
//    worked one. Each is validated by POST /api/state; a refused or damaged link
//    is explained and the next one tried. Its one answer draws every view.

import { getExample, postState } from "./api.js";
import { readLink } from "./link.js";
import { ApiError } from "../shared/http.js";
import { pageWords } from "../shared/words.js";
import { restore } from "./statesave.js";
import { heldOfOne } from "./example.js";
import { HELD_KEY, emit, getState, takeStateAnswer } from "./state.js";

const RETRY_MS = 2000;

/**
 * The answer to start from, and why the link's example could not be used: the lab's
 * sentences, one a line ([] if it could).
 */
async function firstAnswer(example, link, own, saved) {
  const words = pageWords().link;
  const worked = { sequence: example.sequence, explorer: example.explorer, stepper: example.stepper };
  const problems = [];
  const tries = [];
  if (own && own.damaged) problems.push(words.own_damaged);
  else if (own) tries.push([heldOfOne(own.example), words.own_refused]);
  if (link && link.damaged) problems.push(words.damaged);
  else if (link) tries.push([link.example, words.refused]);
  if (!link && !own && saved) tries.push([saved, null]);
  for (const [held, why] of tries) {
    try {
      return [await postState({ held, edits: [] }), problems];
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (why) problems.push(why, ...error.messages, words.worked_shown);
    }
  }
  return [worked, problems];
}

/** Start the page: see the order above. */
export async function start(link = readLink(location.hash), own = readLink(location.hash, "own")) {
  const state = getState();
  const saved = link || own ? null : restore(HELD_KEY);
  // The server wrote the worked example's sentences into the page; another example's are
  // only known from its answer, so until then they are hidden (lab.css: .from-answer).
  if (link || own || saved) document.documentElement.dataset.awaiting = "1";
  let first;
  try {
    state.example = await getExample();
    first = await firstAnswer(state.example, link, own, saved);
  } catch {
    state.connection = "offline";
    emit();
    setTimeout(() => start(link, own), RETRY_MS); // the link read at first, not the rewritten one
    return;
  }
  const [answer, problems] = first;
  takeStateAnswer(answer);
  state.heldMessages = problems; // by the held table
  state.linkMessages = problems; // and in the banner at the top, where the learner starts
  emit();
  delete document.documentElement.dataset.awaiting;
}
