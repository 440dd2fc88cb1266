// A lab's practice: each challenge a disclosure with its prompt, its response form, Check /
// Clear response / New attempt, moves between attempts, tiered hints and "Show the answer".
// The server checks every goal on the learner's inputs and keeps the attempts' rules
// (POST /api/connections/{name}/study); this view draws the study it gets back and the
// lab's study history. Each challenge's controls are built once and updated in place.
// Every word is the lab's: the challenge data, the feedback, the history's panel words, and
// the page's words block.

import { fill, h, text } from "../shared/dom.js";
import { toJson } from "../shared/json.js";
import { readResponse } from "../shared/response.js";
import { pageWords } from "../shared/words.js";
import { studyAction } from "./state.js";

function responseForm(c, saved, words) {
  const spec = c.response;
  if (!spec) return h("p", { class: "hint" }, words.no_response);
  if (spec.type === "choice") {
    return h(
      "fieldset",
      { class: "cx-choice" },
      h("legend", null, spec.label),
      spec.options.map((o) => {
        const id = `cx-resp-${c.id}-${o.id}`;
        const input = h("input", { type: "radio", name: `cx-resp-${c.id}`, value: o.id, id });
        input.checked = saved === o.id;
        return h("div", { class: "cx-choice-row" }, input, h("label", { for: id }, o.text));
      }),
    );
  }
  return h(
    "fieldset",
    { class: "cx-choice" },
    h("legend", null, spec.label),
    spec.fields.map((f, j) => {
      const id = `cx-resp-${c.id}-${j}`;
      const input = h("input", { type: "text", inputmode: "decimal", id, "aria-label": f.label });
      input.value = saved ? String(saved[j]) : "";
      return h("span", { class: "cx-field" }, h("label", { for: id }, f.name), input);
    }),
  );
}

function button(action, label, attrs = {}) {
  const b = h("button", { type: "button", "data-action": action, ...attrs }, label);
  b.addEventListener("pointerdown", (e) => b.setPointerCapture(e.pointerId));
  return b;
}

function build(c, body, words) {
  const act = (action) => studyAction({ challenge: c.id, ...action });
  const p = {
    prev: button("prev-attempt", words.previous, { "aria-label": words.previous_label }),
    label: h("span", { class: "attempt-label" }),
    next: button("next-attempt", words.next, { "aria-label": words.next_label }),
    form: h("div", { class: "response" }),
    status: h("p", { class: "cx-error", role: "alert" }),
    check: button("check", words.check),
    clear: button("clear", words.clear),
    retry: button("retry", words.retry),
    feedback: h("p", { class: "cx-feedback", role: "status", "data-feedback": c.id }),
    hints: h("ol", { class: "hint-list" }),
    hint: button("hint", ""),
    reveal: button("answer", words.reveal),
    answer: h("p", { class: "cx-answer", "data-answer": c.id, hidden: true }),
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
    h("p", { class: "prompt" }, c.prompt),
    h("p", { class: "controls" }, p.prev, p.label, p.next),
    p.form,
    p.status,
    h("p", { class: "controls" }, p.check, p.clear, p.retry),
    p.feedback,
    h("div", { class: "hints" }, p.hints, h("p", { class: "controls" }, p.hint, p.reveal)),
    p.answer,
  );
  return p;
}

function draw(st, c, p, words) {
  const entry = st.study.challenges[c.id] || null;
  const attempt = entry ? entry.attempts[entry.current] : null;
  const n = entry ? entry.attempts.length : 1;
  p.at = entry ? entry.current : 0;
  const formKey = toJson([p.at, attempt ? attempt.response : null]);
  if (formKey !== p.formKey) {
    p.formKey = formKey;
    fill(p.form, responseForm(c, attempt ? attempt.response : null, words));
    text(p.status, "");
  }
  const group = entry ? st.history.find((g) => g.challenge === c.id && g.attempt === entry.current + 1) : null;
  const panel = group ? group.panel : c.panel;
  text(p.label, panel.attempt.text);
  p.prev.disabled = p.at === 0;
  p.next.disabled = p.at >= n - 1;
  const help = attempt ? attempt.help : [];
  p.shown = Math.max(0, ...help.filter((x) => x.kind === "hint").map((x) => x.detail));
  fill(p.hints, c.hints.slice(0, p.shown).map((x) => h("li", null, x)));
  p.hint.hidden = !panel.hint;
  text(p.hint, panel.hint ? panel.hint.text : "");
  const feedback = attempt && attempt.feedback;
  p.feedback.className = feedback ? (feedback.met ? "cx-feedback met" : "cx-feedback not-met") : "cx-feedback";
  if (feedback) fill(p.feedback, h("strong", null, feedback.verdict.text), " ", feedback.words.text);
  else fill(p.feedback);
  const revealed = help.some((x) => x.kind === "answer") ? st.revealed[c.id] : null;
  p.answer.hidden = !revealed;
  if (revealed) fill(p.answer, h("strong", null, words.answer), revealed);
  else fill(p.answer);
}

function drawHistory(root, st, words) {
  if (!st.history.length) return fill(root, h("p", { class: "hint" }, words.no_history));
  fill(
    root,
    st.history.map((g) => {
      const checked = g.checked ? h("p", { "data-checked": g.checked.claims.met ? "met" : "not-met" }, g.checked.text) : null;
      return h(
        "section",
        { class: "cx-history-group", "data-challenge": g.challenge || "before", "data-attempt": g.attempt ? String(g.attempt) : "", "aria-label": g.heading },
        h("h4", null, g.heading),
        checked,
        h("ul", null, g.help.map((l) => h("li", null, l))),
      );
    }),
  );
}

/** Mount the practice; returns draw(state). */
export function mountPractice(els) {
  const words = pageWords().connections;
  const parts = new Map();
  return function drawPractice(st) {
    text(els.message, st.studyMessage);
    els.message.hidden = !st.studyMessage;
    if (!st.answer) return;
    const practice = st.answer.practice;
    if (!parts.size) {
      text(els.note, practice.note);
      for (const c of practice.challenges) {
        const body = h("div", { class: "cx-challenge-body" });
        const details = h("details", { id: `cx-challenge-${c.id}`, "data-challenge": c.id }, h("summary", null, c.title), body);
        details.addEventListener("toggle", () => details.open && studyAction({ kind: "open", challenge: c.id }));
        parts.set(c.id, build(c, body, words));
        els.list.append(details);
      }
    }
    for (const c of practice.challenges) draw(st, c, parts.get(c.id), words);
    drawHistory(els.history, st, words);
  };
}
