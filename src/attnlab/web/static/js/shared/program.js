// "Read the same calculation in Python": the copy and download buttons of a page's program, the
// server's program for the inputs now. The page draws the code; its words are the lab's.

import { text } from "./dom.js";
import { download } from "./download.js";

/**
 * Wire the buttons. els: copy, download, status, code (the program's element, selected when the
 * clipboard refuses). program(): the program shown now ({code, name: its file's name, done: the words
 * once downloaded}), or null before the first answer. words: copied, selected (the clipboard refused).
 */
export function mountProgram(els, program, words) {
  els.copy.addEventListener("click", async () => {
    const shown = program();
    if (!shown) return;
    try {
      await navigator.clipboard.writeText(shown.code);
      text(els.status, words.copied);
    } catch {
      // No clipboard permission: select the code so Ctrl+C copies it.
      const range = document.createRange();
      range.selectNodeContents(els.code);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      text(els.status, words.selected);
    }
  });
  els.download.addEventListener("click", () => {
    const shown = program();
    if (!shown) return;
    download(shown.code, "text/x-python", shown.name);
    text(els.status, shown.done);
  });
}
