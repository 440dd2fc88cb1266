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
import { errorText } from "../shared/http.js";
import { restore } from "./statesave.js";
import { heldOfOne } from "./example.js";
import { HELD_KEY, emit, getState, setFieldError, takeStateAnswer } from "./state.js";

const RETRY_MS = 2000;

/** The answer to start from, and why the link's example could not be used ("" if it could). */
async function firstAnswer(example, link, own, saved) {
  const worked = { sequence: example.sequence, explorer: example.explorer, stepper: example.stepper };
  const problems = [];
  const tries = [];
  if (own && own.damaged) problems.push("This link's own example is damaged, so it is not shown.");
  else if (own) tries.push([heldOfOne(own.example), "This link's own example cannot be opened:"]);
  if (link && link.damaged) problems.push("This link is damaged (its example cannot be read), so the worked example is shown instead.");
  else if (link) tries.push([link.example, "This link's example cannot be opened:"]);
  if (!link && !own && saved) tries.push([saved, null]);
  for (const [held, why] of tries) {
    const answer = await postState({ held, edits: [] });
    if (answer.ok) return [answer.body, problems.join(" ")];
    if (why) problems.push(`${why} ${errorText(answer)} The worked example is shown instead.`);
  }
  return [worked, problems.join(" ")];
}

/** Start the page: see the order above. */
export async function start(link = readLink(location.hash), own = readLink(location.hash, "own")) {
  const state = getState();
  let first;
  try {
    state.example = await getExample();
    first = await firstAnswer(state.example, link, own, link || own ? null : restore(HELD_KEY));
  } catch {
    state.connection = "offline";
    emit();
    setTimeout(() => start(link, own), RETRY_MS); // the link read at first, not the rewritten one
    return;
  }
  const [answer, problem] = first;
  takeStateAnswer(answer);
  if (problem) {
    state.heldMessage = problem; // by the held table
    setFieldError("link", problem); // and in the banner at the top, where the learner starts
  }
  emit();
}
