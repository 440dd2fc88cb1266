// The explorer's texts: the row label and the sentences that say which row is
// shown (state.ui, set from the held example's answer), the query caption, the
// one-line summary, the Mix hint and the second-source > 90% challenge. Every
// string is the lab's (display.labels, words, challenge); this module only places them.

import { text } from "../shared/dom.js";

/** Draw the texts that frame the explorer. `els` holds the elements by role. */
export function drawSummary(els, state) {
  const result = state.result;
  if (state.ui.rowLabel) text(els.rowLabel, state.ui.rowLabel);
  // Sentences that say which row is shown (the server words them; until the
  // held example answers, the page shows the worked example's, written in by the server).
  for (const [key, el] of Object.entries(els.texts)) {
    if (state.ui.texts && key in state.ui.texts) text(el, state.ui.texts[key].text);
  }
  if (!result) return;
  const said = result.display.labels;
  text(els.caption, said.caption.text);
  if (els.eyebrow) text(els.eyebrow, said.eyebrow.text);
  if (els.mixHint) text(els.mixHint, said.mix_hint.text);
  text(els.summary, result.words.summary);
  const challenge = result.challenge;
  text(els.goal, challenge.goal);
  text(els.status, challenge.status);
  els.challenge.classList.toggle("met", challenge.met);
  els.badge.hidden = !challenge.met;
}
