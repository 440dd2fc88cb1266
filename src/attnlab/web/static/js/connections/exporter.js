// Export: the server writes the JSON document and the Markdown report for the inputs now and
// the visit's study; this module downloads what it answers.

import { text } from "../shared/dom.js";
import { download } from "../shared/download.js";
import { exportText, getState } from "./state.js";

export function mountExport(els) {
  for (const [button, kind, type] of [[els.json, "json", "application/json"], [els.markdown, "markdown", "text/markdown"]]) {
    button.addEventListener("click", async () => {
      const answer = getState().answer;
      if (!answer) return;
      try {
        const body = await exportText(kind);
        download(body, type, answer.files[kind].name);
        text(els.status, answer.files[kind].done);
      } catch (error) {
        text(els.status, error.message);
      }
    });
  }
}
