// "Read the same calculation in Python": the server's program for the
// current state, with copy and download buttons (js/shared/program.js; their words: pageWords().python).

import { text } from "../shared/dom.js";
import { mountProgram } from "../shared/program.js";
import { pageWords } from "../shared/words.js";

export function mountPython(els, getResult) {
  const words = pageWords().python;
  mountProgram(
    els,
    () => {
      const result = getResult();
      return result && { code: result.python, name: words.filename, done: words.downloaded };
    },
    { copied: words.copied, selected: words.no_clipboard },
  );
  return function draw(result) {
    text(els.code, result.python);
    text(els.expected, result.display.labels.python_expected.text);
  };
}
