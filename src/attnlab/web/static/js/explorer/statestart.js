// The page's start, in one place and one order, so nothing at start-up can race:
//
// 1. read the link (#example=…&own=…) and this tab's saved states ONCE, before
//    any answer rewrites the address bar;
// 2. GET /api/example: the worked example with its whole answer (explorer,
//    held view and stepper), and what Reset restores;
// 3. the held example: the link's (validated by POST /api/state; a refused or
//    damaged link is explained and the worked example shown), else this tab's
//    saved one, else the worked one; its one answer draws both views;
// 4. only then the explorer's own state, queued after the held example is in:
//    the link's own example (detached), or this tab's newest input.
// Nothing else pushes explorer fields at start, so an own example from the link
// can never be merged with the held example's sources.

import { getExample, postState } from "./api.js";
import { toJson } from "../shared/json.js";
import { readLink } from "./link.js";
import { errorText } from "../notebook/api.js";
import { restore } from "./statesave.js";
import { loadExample } from "./example.js";
import { HELD_KEY, STORAGE_KEY, emit, getState, request, setFieldError, takeStateAnswer } from "./state.js";

const RETRY_MS = 2000;


function savedExplorer() {
  const saved = restore(STORAGE_KEY);
  const ok = saved && Array.isArray(saved.q) && Array.isArray(saved.keys) && Array.isArray(saved.values);
  return ok ? { input: saved, detached: restore(`${STORAGE_KEY}.detached`) === 1 } : null;
}

/** The held example's answer to start from, and why the link's could not be used ("" if it could). */
async function heldAnswer(example, link, saved) {
  const worked = { sequence: example.sequence, explorer: example.result, stepper: example.stepper };
  if (link && link.damaged) {
    return [worked, "This link is damaged (its example cannot be read), so the worked example is shown instead."];
  }
  const held = link ? link.example : saved;
  if (!held) return [worked, ""];
  const answer = await postState({ held, edits: [] });
  if (answer.ok) return [answer.body, ""];
  const why = link ? `This link's example cannot be opened: ${errorText(answer)} The worked example is shown instead.` : "";
  return [worked, why];
}

/** Start the page: see the order above. */
export async function start(link = readLink(location.hash), own = readLink(location.hash, "own")) {
  const state = getState();
  const saved = own || link ? null : savedExplorer();
  let first;
  try {
    state.example = await getExample();
    first = await heldAnswer(state.example, link, link ? null : restore(HELD_KEY));
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
  if (own && own.damaged) setFieldError("link", "This link's own example is damaged, so it is not shown.");
  else if (own) loadExample(own.example); // the server validates it; a refusal says why
  else if (saved && toJson(saved.input) !== toJson(state.input)) {
    // This tab's newest input: held edits when it is a held row, else its own trace.
    state.requested = saved.input;
    request({ input: saved.input, detach: saved.detached });
  }
}
