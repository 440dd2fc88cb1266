// "Let SmolLM2 continue the text": start a generation job (waiting its turn
// when the server's line is full) and draw its pieces as they arrive (the
// server appends one piece per token; we poll).
import { byId, fill, h, text } from "../shared/dom.js";
import { getJson, postJsonInTurn } from "./api.js";

const POLL_MS = 100;

/** One generation step: the token drawn and the distribution it was drawn from (the server's top 5). */
function stepItem(step) {
  return h("li", { class: "rm-step", "data-index": step.index },
    h("details", { class: "rm-more" },
      h("summary", {}, h("code", {}, JSON.stringify(step.token)), ` drawn with p ${step.p_display}`),
      h("ol", { class: "rm-step-top" }, step.top.map((t) =>
        h("li", { class: t.id === step.id ? "is-drawn" : "" },
          h("code", {}, JSON.stringify(t.token)), ` ${t.p_display}`, t.id === step.id ? " (drawn)" : "")))));
}

/** What the generation is doing or waiting for (the server says the place in line). */
function waiting(job) {
  if (job.status === "running") return `Writing token ${job.tokens + 1} of at most ${job.max_new_tokens}…`;
  if (job.status === "queued" && job.place > 0) {
    return `You are ${job.place_display}: SmolLM2 works on one request at a time…`;
  }
  return job.status === "queued" ? "Starting SmolLM2…" : "Loading SmolLM2 (once per server)…";
}

/**
 * Wire the panel to the view's text box.
 * @param {HTMLTextAreaElement} source the text to continue
 * @param {() => void} [onDone] called when a generation has finished (the model is loaded then)
 */
export function setupGenerate(source, onDone = () => {}) {
  const run = byId("rm-gen-run");
  const tokens = byId("rm-gen-tokens");
  const chat = byId("rm-gen-chat");
  const status = byId("rm-gen-status");
  const error = byId("rm-gen-error");
  const out = byId("rm-gen-out");
  const steps = byId("rm-gen-steps");

  function showError(message) {
    text(error, message || "");
    error.hidden = !message;
  }

  async function go() {
    showError("");
    run.disabled = true;
    const prompt = source.value;
    try {
      let job = await postJsonInTurn(
        "/api/models/generate",
        { prompt, chat: chat.checked, max_new_tokens: Number(tokens.value) },
        (message, left) => text(status, `${message} Trying again in ${left} s…`),
      );
      for (;;) {
        fill(out, chat.checked ? null : h("span", { class: "rm-gen-prompt" }, prompt),
          h("span", { class: "rm-gen-new" }, job.text));
        fill(steps, (job.steps ?? []).map(stepItem));
        if (job.status === "done" || job.status === "error" || job.status === "cancelled") break;
        text(status, waiting(job));
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        job = await getJson(`/api/models/generate/${encodeURIComponent(job.id)}`);
      }
      if (job.status !== "done") throw new Error(job.message);
      const stopped = job.finish === "end_of_turn"
        ? `Stopped at the end of its turn after ${job.tokens} ${job.tokens === 1 ? "token" : "tokens"}.`
        : `Stopped after ${job.tokens} tokens (the limit).`;
      // an instruct model asked without chat ends its turn at once: the server says what to do
      text(status, job.hint ? `${stopped} ${job.hint}` : stopped);
      onDone();
    } catch (problem) {
      showError(problem.message);
      text(status, "Nothing generated: fix the request and try again.");
    } finally {
      run.disabled = false;
    }
  }

  run.addEventListener("click", go);
}
