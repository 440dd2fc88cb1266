// The connection message: shown when the server stops answering; the
// learner's state stays on the page and in this tab's sessionStorage.
// A refusal that names no field on the page shows here too.

import { text } from "../shared/dom.js";

export function drawStatus(els, state) {
  const offline = state.connection === "offline";
  els.offline.hidden = !offline;
  text(
    els.offline,
    offline
      ? "The attnlab server is not answering. Your numbers are kept in this tab; start attnlab again and the page will pick up where you left off."
      : "",
  );
  // Messages for fields that have no input on the page (e.g. labels) show here.
  const orphans = Object.entries(state.fieldErrors)
    .filter(([field]) => field === "body" || !hasField(field))
    .map(([, message]) => message);
  const message = orphans.join(" ");
  els.problem.hidden = !message;
  text(els.problem, message);
}

function hasField(field) {
  for (const el of document.querySelectorAll("[data-error-for], [data-own-error-for]")) {
    const name = el.dataset.errorFor || el.dataset.ownErrorFor;
    if (name === field || name.startsWith(`${field}[`)) return true;
  }
  return false;
}
