// The connection message: shown when the server stops answering; the
// learner's state stays on the page and in this tab's sessionStorage.
// Why the address bar's link could not be opened, and a refusal that names no
// field on the page, show in the banner too, one message a line. Every
// sentence is the lab's (the page's words, or the server's messages).

import { lines, text } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";

export function drawStatus(els, state) {
  const offline = state.connection === "offline";
  els.offline.hidden = !offline;
  text(els.offline, offline ? pageWords().offline : "");
  // Messages for fields that have no input on the page (e.g. labels) show here.
  const orphans = Object.entries(state.fieldErrors)
    .filter(([field]) => field === "body" || !hasField(field))
    .map(([, message]) => message);
  const messages = [...state.linkMessages, ...orphans];
  els.problem.hidden = !messages.length;
  lines(els.problem, messages);
}

function hasField(field) {
  for (const el of document.querySelectorAll("[data-error-for], [data-own-error-for]")) {
    const name = el.dataset.errorFor || el.dataset.ownErrorFor;
    if (name === field || name.startsWith(`${field}[`)) return true;
  }
  return false;
}
