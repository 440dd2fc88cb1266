// "Let SmolLM2 continue the text": start a generation job and draw its pieces
// as they arrive (the server appends one piece per token; we poll).
import { byId, fill, h, text } from "./dom.js";
import { getJson, postJson } from "./realmodel-api.js";

const POLL_MS = 100;

/**
 * Wire the panel to the view's text box.
 * @param {HTMLTextAreaElement} source the text to continue
 */
export function setupGenerate(source) {
  const run = byId("rm-gen-run");
  const tokens = byId("rm-gen-tokens");
  const chat = byId("rm-gen-chat");
  const status = byId("rm-gen-status");
  const error = byId("rm-gen-error");
  const out = byId("rm-gen-out");

  function showError(message) {
    text(error, message || "");
    error.hidden = !message;
  }

  async function go() {
    showError("");
    run.disabled = true;
    const prompt = source.value;
    try {
      let job = await postJson("/api/models/generate", {
        prompt, chat: chat.checked, max_new_tokens: Number(tokens.value),
      });
      for (;;) {
        fill(out, chat.checked ? null : h("span", { class: "rm-gen-prompt" }, prompt),
          h("span", { class: "rm-gen-new" }, job.text));
        if (job.status === "done" || job.status === "error") break;
        text(status, job.status === "running"
          ? `Writing token ${job.tokens + 1} of at most ${job.max_new_tokens}…`
          : "Loading SmolLM2 (once per server)…");
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        job = await getJson(`/api/models/generate/${encodeURIComponent(job.id)}`);
      }
      if (job.status === "error") throw new Error(job.message);
      text(status, job.finish === "end_of_turn"
        ? `Stopped at the end of its turn after ${job.tokens} tokens.`
        : `Stopped after ${job.tokens} tokens (the limit).`);
    } catch (problem) {
      showError(problem.message);
      text(status, "Nothing generated: fix the request and try again.");
    } finally {
      run.disabled = false;
    }
  }

  run.addEventListener("click", go);
}
