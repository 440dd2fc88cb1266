// "Let the model continue the text": two choices, "Continue the text" (the text as
// it is) and "Answer as the assistant (chat template)". The model that writes is the
// chosen one where it is a decoder, else the first that is (the server says which:
// GET /api/models/about's writer); a model without a chat template has no chat choice,
// and the server's note says so. Start a generation job (waiting its turn when the
// server's line is full) and draw its pieces as they arrive (the server appends one
// piece per token; we poll). The server writes every sentence (status_line, hint,
// the view's words) and every token's visible label.
import { byId, fill, h, text } from "../shared/dom.js";
import { getJSON, postJSONInTurn } from "../shared/http.js";
import { fillIn } from "./words.js";

const POLL_MS = 100;

/** One generation step: the token drawn and the distribution it was drawn from (the server's top 5). */
function stepItem(step) {
  return h("li", { class: "rm-step", "data-index": step.index },
    h("details", { class: "rm-more" },
      h("summary", {}, h("code", { title: step.exact }, step.label), " ", step.drawn),
      h("ol", { class: "rm-step-top" }, step.top.map((t) =>
        h("li", { class: t.id === step.id ? "is-drawn" : "" },
          h("code", { title: t.exact }, t.label), " ", t.cell)))));
}

/**
 * Wire the panel to the view's text box.
 * @param {HTMLTextAreaElement} source the text to continue
 * @param {() => Record<string, string>} words the view's sentences and templates (GET /api/models' words)
 * @param {() => void} [onDone] called when a generation has finished (the model is loaded then)
 * @returns {{show: (about: object) => void}} call with each chosen model's GET /api/models/about answer
 */
export function setupGenerate(source, words, onDone = () => {}) {
  const buttons = [byId("rm-gen-run"), byId("rm-gen-chat")];
  const tokens = byId("rm-gen-tokens");
  const status = byId("rm-gen-status");
  const error = byId("rm-gen-error");
  const out = byId("rm-gen-out");
  const steps = byId("rm-gen-steps");
  const writerNote = byId("rm-gen-writer");
  const chatNote = byId("rm-gen-chat-note");
  let writer = null; // the model that writes (null: the server's first decoder)

  function showError(message) {
    text(error, message || "");
    error.hidden = !message;
  }

  /** chat: false continues the text as it is; true answers it as the chat template's user turn. */
  async function go(chat) {
    showError("");
    for (const b of buttons) b.disabled = true;
    const prompt = source.value;
    try {
      let job = await postJSONInTurn(
        "/api/models/generate",
        { prompt, chat, max_new_tokens: Number(tokens.value), ...(writer ? { model: writer } : {}) },
        (message, left) => text(status, fillIn(words().retry, { message, seconds: left })),
      );
      for (;;) {
        fill(out, chat ? null : h("span", { class: "rm-gen-prompt" }, prompt),
          h("span", { class: "rm-gen-new" }, job.text));
        out.dataset.mode = job.mode;
        fill(steps, (job.steps ?? []).map(stepItem));
        text(status, job.status_line.text);
        if (job.status === "done" || job.status === "error" || job.status === "cancelled") break;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        job = await getJSON(`/api/models/generate/${encodeURIComponent(job.id)}`);
      }
      if (job.status !== "done") throw new Error(job.message);
      // an instruct model asked to continue ends its turn at once: the server says what to do
      if (job.hint) fill(status, job.status_line.text, " ", h("span", { class: "rm-gen-hint" }, job.hint));
      onDone();
    } catch (problem) {
      showError(problem.message);
      text(status, words().nothing_generated);
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  buttons[0].addEventListener("click", () => go(false));
  buttons[1].addEventListener("click", () => go(true));

  return {
    /** The chosen model's answer (GET /api/models/about): which model writes, and its chat or why none. */
    show(about) {
      writer = about.writer;
      text(writerNote, about.writer_note.text);
      buttons[1].parentElement.hidden = !about.writer_chat;
      text(chatNote, about.chat_note ? about.chat_note.text : "");
      chatNote.hidden = !about.chat_note;
    },
  };
}
