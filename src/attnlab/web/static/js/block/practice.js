// The block's challenges: each a disclosure with its prompt, its response
// form, Check / Clear response / New attempt, moves between attempts, tiered
// hints and "Show the answer". The server checks every goal with the engine on
// the learner's block and keeps the attempts' rules (POST /api/block/study);
// its feedback says which way to go, not the answer. This view only draws the
// study it gets back, and the block part's study history beside the page's.
//
// Each challenge's controls are built once and updated in place; its form is
// mounted once per (attempt, saved response). So a study answer that arrives
// while the learner types or presses Check (the "open" of a disclosure, say)
// never replaces the field being typed in or the button being pressed.
// Every word shown is the lab's: the challenge data, the feedback's verdict
// and words, the panel words of the attempt's history group (its "Attempt 2
// of 3", its next hint's button), the history's lines and the panel's buttons
// and notes (GET /api/block/practice's words).

import { fill, h, text } from "../shared/dom.js";
import { toJson } from "../shared/json.js";
import { blockStudy, subscribeBlock } from "./state.js";
import { readResponse } from "../shared/response.js";

function attemptOf(block, id) {
  const entry = block.study.challenges[id] || null;
  return { entry, attempt: entry ? entry.attempts[entry.current] : null };
}

/** The panel words for challenge `c` now: its current attempt's history group's, or the fresh ones. */
function panelOf(block, c, entry) {
  if (!entry) return c.panel;
  const group = block.history.find((g) => g.challenge === c.id && g.attempt === entry.current + 1);
  return group ? group.panel : c.panel;
}

function responseForm(c, saved, words) {
  const spec = c.response;
  if (!spec) return h("p", { class: "hint" }, words.no_response);
  if (spec.type === "choice") {
    return h(
      "fieldset",
      { class: "choice" },
      h("legend", null, spec.label),
      spec.options.map((o) => {
        const id = `bresp-${c.id}-${o.id}`;
        const input = h("input", { type: "radio", name: `bresp-${c.id}`, value: o.id, id });
        input.checked = saved === o.id;
        return h("div", { class: "choice-row" }, input, h("label", { for: id }, o.text));
      }),
    );
  }
  return h(
    "fieldset",
    { class: "numbers" },
    h("legend", null, spec.label),
    spec.fields.map((f, j) => {
      const id = `bresp-${c.id}-${j}`;
      const input = h("input", { type: "text", inputmode: "decimal", id, "aria-label": f.label });
      input.value = saved ? String(saved[j]) : "";
      return h("span", { class: "field" }, h("label", { for: id }, f.name), input);
    }),
  );
}

/**
 * A button whose press keeps it: the pointer is captured on press, so the click lands on this
 * button even when a study answer redraws the page above it between press and release.
 */
function button(action, label, attrs = {}) {
  const b = h("button", { type: "button", "data-action": action, ...attrs }, label);
  b.addEventListener("pointerdown", (e) => b.setPointerCapture(e.pointerId));
  return b;
}

/** One challenge's controls, built once; `draw` updates them from the study. `words`: the panel's. */
function buildChallenge(c, body, words) {
  const act = (action) => blockStudy({ challenge: c.id, ...action });
  const p = {
    words,
    prompt: h("p", { class: "prompt" }, c.prompt),
    prev: button("prev-attempt", words.previous, { "aria-label": words.previous_label }),
    label: h("span", { class: "attempt-label" }),
    next: button("next-attempt", words.next, { "aria-label": words.next_label }),
    form: h("div", { class: "response" }),
    status: h("p", { class: "form-error", role: "alert" }),
    check: button("check", words.check),
    clear: button("clear", words.clear),
    retry: button("retry", words.retry),
    feedback: h("p", { class: "feedback", role: "status", "data-feedback": c.id }),
    hints: h("ol", { class: "hint-list" }),
    hint: button("hint", ""),
    reveal: button("answer", words.reveal),
    answer: h("p", { class: "block-answer", "data-answer": c.id, hidden: true }),
    at: 0,
    shown: 0,
    formKey: null,
  };
  p.check.addEventListener("click", () => {
    const read = readResponse(c, p.form);
    if (read.error) return text(p.status, read.error);
    text(p.status, "");
    const action = { kind: "submit" };
    if (read.value !== null) action.response = read.value;
    act(action);
  });
  p.form.addEventListener("input", () => text(p.status, ""));
  p.clear.addEventListener("click", () => act({ kind: "clear" }));
  p.retry.addEventListener("click", () => act({ kind: "retry" }));
  p.prev.addEventListener("click", () => act({ kind: "goto", attempt: p.at - 1 }));
  p.next.addEventListener("click", () => act({ kind: "goto", attempt: p.at + 1 }));
  p.hint.addEventListener("click", () => act({ kind: "help", help: "hint", detail: p.shown + 1 }));
  p.reveal.addEventListener("click", () => act({ kind: "help", help: "answer" }));
  fill(
    body,
    p.prompt,
    h("p", { class: "attempt-nav" }, p.prev, p.label, p.next),
    p.form,
    p.status,
    h("p", { class: "controls" }, p.check, p.clear, p.retry),
    p.feedback,
    h("div", { class: "hints" }, p.hints, h("p", { class: "controls" }, p.hint, p.reveal)),
    p.answer,
  );
  return p;
}

function drawChallenge(block, c, p) {
  const { entry, attempt } = attemptOf(block, c.id);
  const n = entry ? entry.attempts.length : 1;
  p.at = entry ? entry.current : 0;
  const formKey = toJson([p.at, attempt ? attempt.response : null]);
  if (formKey !== p.formKey) {
    // another attempt or saved response: mount its form (what the learner types otherwise stays)
    p.formKey = formKey;
    fill(p.form, responseForm(c, attempt ? attempt.response : null, p.words));
    text(p.status, "");
  }
  const panel = panelOf(block, c, entry);
  text(p.label, panel.attempt.text);
  p.prev.disabled = p.at === 0;
  p.next.disabled = p.at >= n - 1;
  const help = attempt ? attempt.help : [];
  p.shown = Math.max(0, ...help.filter((x) => x.kind === "hint").map((x) => x.detail));
  fill(p.hints, c.hints.slice(0, p.shown).map((x) => h("li", null, x)));
  p.hint.hidden = !panel.hint;
  text(p.hint, panel.hint ? panel.hint.text : "");
  const feedback = attempt && attempt.feedback;
  p.feedback.className = feedback ? (feedback.met ? "feedback met" : "feedback not-met") : "feedback";
  if (feedback) fill(p.feedback, h("strong", null, feedback.verdict.text), " ", feedback.words.text);
  else fill(p.feedback);
  const revealed = help.some((x) => x.kind === "answer") ? block.revealed[c.id] : null;
  p.answer.hidden = !revealed;
  if (revealed) fill(p.answer, h("strong", null, p.words.answer_lead), " ", revealed);
  else fill(p.answer);
}

function drawHistory(block, history) {
  if (!block.history.length) return fill(history, h("p", { class: "hint" }, block.practice.words.no_help));
  fill(
    history,
    block.history.map((g) => {
      const checked = g.checked ? h("p", { class: g.checked.claims.met ? "check-met" : "check-not-met", "data-checked": g.checked.claims.met ? "met" : "not-met" }, g.checked.text) : null;
      return h("section", { class: "history-group", "data-block-challenge": g.challenge || "before", "data-attempt": g.attempt ? String(g.attempt) : "", "aria-label": g.heading }, h("h5", null, g.heading), checked, h("ul", null, g.help.map((l) => h("li", null, l))));
    }),
  );
}

export function mountBlockPractice(root) {
  const note = h("p", { class: "hint", id: "block-practice-note" });
  const message = h("p", { class: "banner problem", id: "block-practice-message", role: "alert", hidden: true });
  const list = h("div", { id: "block-challenges" });
  root.append(note, message, list);
  const parts = new Map();

  // The block part's study history joins the page's "Study history for this visit".
  const historyPanel = document.getElementById("history");
  const history = h("div", { id: "block-history", class: "block-history", "aria-live": "polite" });
  const heading = h("h4", { hidden: true });
  (historyPanel || root).append(heading, history);

  subscribeBlock((block) => {
    text(message, block.studyMessage);
    message.hidden = !block.studyMessage;
    if (block.practice && !parts.size) {
      text(note, block.practice.note);
      text(heading, block.practice.words.history_heading);
      heading.hidden = false;
      for (const c of block.practice.challenges) {
        const body = h("div", { class: "disclosure-body" });
        const details = h("details", { class: "disclosure block-challenge", id: `block-challenge-${c.id}`, "data-challenge": c.id }, h("summary", null, c.title), body);
        details.addEventListener("toggle", () => details.open && blockStudy({ kind: "open", challenge: c.id }));
        parts.set(c.id, buildChallenge(c, body, block.practice.words));
        list.append(details);
      }
    }
    if (!block.practice) return;
    for (const c of block.practice.challenges) drawChallenge(block, c, parts.get(c.id));
    drawHistory(block, history);
  });
}
