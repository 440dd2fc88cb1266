// "Read the same calculation in Python": the server's program for the inputs now, with copy and
// download (js/shared/program.js). The words are the lab's (the page's words block, the answer's files).

import { text } from "../shared/dom.js";
import { mountProgram } from "../shared/program.js";
import { pageWords } from "../shared/words.js";

export function mountPython(els, getAnswer) {
  mountProgram(
    els,
    () => {
      const answer = getAnswer();
      return answer && { code: answer.python, name: answer.files.program.name, done: answer.files.program.done };
    },
    pageWords().connections,
  );
  return function draw(answer) {
    text(els.code, answer.python);
  };
}
