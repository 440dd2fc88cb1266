// A lab's practice: each challenge a disclosure with its challenge panel (js/shared/practice.js).
// The server checks every goal on the learner's inputs and keeps the attempts' rules
// (POST /api/connections/{name}/study); this view draws the study it gets back and the
// lab's study history. Every word is the lab's: the challenge data, the study's, and the
// page's words block.

import { text } from "../shared/dom.js";
import { challengeDisclosures, drawAttempt, drawHistory } from "../shared/practice.js";
import { pageWords } from "../shared/words.js";
import { studyAction } from "./state.js";

// The labs' names (connections.css).
const LOOK = {
  form: "cx-resp",
  choice: "cx-choice",
  choiceRow: "cx-choice-row",
  numbers: "cx-choice",
  field: "cx-field",
  nav: "controls",
  error: "cx-error",
  feedback: "cx-feedback",
  answer: "cx-answer",
  disclosure: null,
  disclosureId: "cx-challenge",
  body: "cx-challenge-body",
  group: "cx-history-group",
  groupChallenge: "data-challenge",
  heading: "h4",
};

/** Mount the practice; returns draw(state). */
export function mountPractice(els) {
  const words = pageWords().connections;
  let panels = null;
  return function drawPractice(st) {
    text(els.message, st.studyMessage);
    els.message.hidden = !st.studyMessage;
    if (!st.answer) return;
    const practice = st.answer.practice;
    if (!panels) {
      text(els.note, practice.note);
      panels = challengeDisclosures(els.list, practice.challenges, { look: LOOK, words, send: studyAction });
    }
    for (const c of practice.challenges) drawAttempt(panels.get(c.id), c, st);
    drawHistory(els.history, st.history, words.no_history, LOOK, { checks: words.history_checks, help: words.history_help });
  };
}
