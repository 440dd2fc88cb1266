// "Study history for this visit": per attempt, the checks made (right or not
// yet), the hints used and any answer shown, as the server groups them (no
// scores). It lives only in this page: reloading clears it; a JSON export keeps
// it and importing that file restores it. Opening the explorer's disclosures
// counts as help for the attempt the learner leaves.

import { fill, h } from "../shared/dom.js";
import { pageWords } from "../shared/words.js";
import { getNb, recordHelp, subscribeNb } from "./state.js";

// The explorer's disclosures and the help kind each records.
const WATCHED = [
  ["every-number", "every-number"],
  ["precise", "precise"],
  ["python", "python"],
  ["geometry", "geometry"],
  ["current", "current"],
];

export function watchHelp() {
  for (const [id, kind] of WATCHED) {
    const details = document.getElementById(id);
    if (!details) continue;
    details.addEventListener("toggle", () => {
      if (details.open) recordHelp(kind);
    });
  }
}

export function mountHistory(els) {
  const words = pageWords().history;
  function draw(nb) {
    if (!nb.history.length) {
      fill(els.list, h("p", { class: "hint", id: "history-empty" }, words.empty));
      return;
    }
    fill(
      els.list,
      nb.history.map((g) =>
        h(
          "section",
          {
            class: "history-group",
            "data-challenge": g.challenge || "before",
            "data-attempt": g.attempt === null ? "" : String(g.attempt),
            "aria-label": g.heading,
          },
          h("h4", null, g.heading),
          g.checks && g.checks.length
            ? h("ul", { class: "history-checks", "aria-label": words.checks }, g.checks.map((c) => h("li", { class: c.met ? "check-met" : "check-not-met" }, c.label)))
            : null,
          h("ul", { class: "history-help", "aria-label": words.help }, g.help.map((label) => h("li", null, label))),
        ),
      ),
    );
  }
  subscribeNb(draw);
  draw(getNb());
}
