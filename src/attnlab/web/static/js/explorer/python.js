// "Read the same calculation in Python": the server's program for the
// current state, with copy and download buttons (their words: pageWords().python).

import { text } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";

export function mountPython(els, getResult) {
  const words = pageWords().python;
  els.copy.addEventListener("click", async () => {
    const result = getResult();
    if (!result) return;
    try {
      await navigator.clipboard.writeText(result.python);
      text(els.status, words.copied);
    } catch {
      // No clipboard permission: select the code so Ctrl+C copies it.
      const range = document.createRange();
      range.selectNodeContents(els.code);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      text(els.status, words.no_clipboard);
    }
  });
  els.download.addEventListener("click", () => {
    const result = getResult();
    if (!result) return;
    const url = URL.createObjectURL(new Blob([result.python], { type: "text/x-python" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = words.filename;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    text(els.status, words.downloaded);
  });
  return function draw(result) {
    text(els.code, result.python);
    text(els.expected, result.display.labels.python_expected.text);
  };
}
