// "Read the same calculation": the Match / Share / Mix paragraphs, written
// by the server (lab/explorer/words.py) with the live numbers.

import { text } from "../shared/dom.js";

export function drawWords(els, result) {
  text(els.match, result.words.match);
  text(els.share, result.words.share);
  text(els.mix, result.words.mix);
}
