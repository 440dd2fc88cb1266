// The explorer's texts: the row label and the sentences that say whether the
// row is masked (state.ui, set from the held example's answer), the query caption, the
// one-line summary and the B > 90% challenge.

import { text } from "../shared/dom.js";

/** Draw the texts that frame the explorer. `els` holds the elements by role. */
export function drawSummary(els, state) {
  const result = state.result;
  if (state.detached && result) {
    // An example of its own (loadExample): not a row of the held sequence.
    const n = result.trace.labels.length;
    text(els.rowLabel, `Your own example · one query over ${n} source${n === 1 ? "" : "s"}.`);
    text(
      els.texts.row,
      "= not the held A/B/C sequence below, which keeps its numbers; Reset example returns to the worked example.",
    );
  } else {
    text(els.rowLabel, state.ui.rowLabel);
    // Sentences that say whether the row shown is masked (the server words them;
    // until the held example answers, the page's own unmasked wording stays).
    for (const [key, el] of Object.entries(els.texts)) {
      if (state.ui.texts && key in state.ui.texts) text(el, state.ui.texts[key]);
    }
  }
  if (!result) return;
  text(els.caption, `q = ${result.display.q} · Compare the query with each key.`);
  text(els.summary, result.words.summary);
  const challenge = result.challenge;
  text(els.goal, challenge.goal);
  text(els.status, challenge.status);
  els.challenge.classList.toggle("met", challenge.met);
  els.badge.hidden = !challenge.met;
}
