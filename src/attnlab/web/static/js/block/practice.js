// The block's challenges: each a disclosure with its challenge panel (js/shared/practice.js). The
// server checks every goal with the engine on the learner's block and keeps the attempts' rules
// (POST /api/block/study); its feedback says which way to go, not the answer. This view only draws
// the study it gets back, and the block part's study history beside the page's.
// Every word shown is the lab's: the challenge data, the study's and the panel's words
// (GET /api/block/practice's words).

import { h, text } from "../shared/dom.js";
import { challengeDisclosures, drawAttempt, drawHistory } from "../shared/practice.js";
import { blockStudy, subscribeBlock } from "./state.js";

// The block's names where they differ from the notebook's on the same page: its form's ids, and its
// history groups (data-block-challenge, so the notebook's history queries never meet them).
const LOOK = {
  form: "bresp",
  answer: "block-answer",
  disclosure: "disclosure block-challenge",
  disclosureId: "block-challenge",
  body: "disclosure-body",
  group: "history-group",
  groupChallenge: "data-block-challenge",
  heading: "h5",
};

export function mountBlockPractice(root) {
  const note = h("p", { class: "hint", id: "block-practice-note" });
  const message = h("p", { class: "banner problem", id: "block-practice-message", role: "alert", hidden: true });
  const list = h("div", { id: "block-challenges" });
  root.append(note, message, list);
  let panels = null;

  // The block part's study history joins the page's "Study history for this visit".
  const historyPanel = document.getElementById("history");
  const history = h("div", { id: "block-history", class: "block-history", "aria-live": "polite" });
  const heading = h("h4", { hidden: true });
  (historyPanel || root).append(heading, history);

  subscribeBlock((block) => {
    text(message, block.studyMessage);
    message.hidden = !block.studyMessage;
    if (!block.practice) return;
    const words = block.practice.words;
    if (!panels) {
      text(note, block.practice.note);
      text(heading, words.history_heading);
      heading.hidden = false;
      panels = challengeDisclosures(list, block.practice.challenges, { look: LOOK, words, send: blockStudy });
    }
    for (const c of block.practice.challenges) drawAttempt(panels.get(c.id), c, block);
    drawHistory(history, block.history, words.no_help, LOOK);
  });
}
