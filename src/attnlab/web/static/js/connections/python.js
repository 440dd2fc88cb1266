// "Read the same calculation in Python": the server's program for the inputs now, with copy and
// download. The words are the lab's (the page's words block).

import { text } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";

export function download(body, type, name) {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function mountPython(els, getAnswer) {
  const words = pageWords().connections;
  els.copy.addEventListener("click", async () => {
    const answer = getAnswer();
    if (!answer) return;
    try {
      await navigator.clipboard.writeText(answer.python);
      text(els.status, words.copied);
    } catch {
      const range = document.createRange();
      range.selectNodeContents(els.code);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      text(els.status, words.selected);
    }
  });
  els.download.addEventListener("click", () => {
    const answer = getAnswer();
    if (!answer) return;
    download(answer.python, "text/x-python", answer.files.program.name);
    text(els.status, answer.files.program.done);
  });
  return function draw(answer) {
    text(els.code, answer.python);
  };
}
