// Practice: each challenge is a disclosure with its prompt, its response form,
// Check / Clear response / New attempt, moves between attempts and tiered hints.
// The server checks every goal with the engine on the held example and keeps
// the rules of attempts (POST /api/notebook/study); this view only draws the
// study it gets back. Each attempt shows its own response, feedback and hints.

import { fill, h, text } from "./dom.js";
import { toJson } from "./json.js";
import { getNb, studyAction, subscribeNb } from "./nbstate.js";

function entryOf(nb, id) {
  return nb.study.challenges[id] || null;
}

function currentAttempt(entry) {
  return entry ? entry.attempts[entry.current] : null;
}

/** The response form's value, or undefined with a message when it is not usable. */
function readResponse(c, form) {
  const spec = c.response;
  if (!spec) return { value: null };
  if (spec.type === "choice") {
    const picked = form.querySelector("input[type=radio]:checked");
    return picked ? { value: picked.value } : { error: "Pick one answer first." };
  }
  const values = [];
  for (const input of form.querySelectorAll("input[type=text]")) {
    const raw = input.value.trim();
    const x = raw === "" ? NaN : Number(raw.replace("−", "-"));
    if (!Number.isFinite(x)) return { error: `“${input.getAttribute("aria-label")}” needs a number.` };
    values.push(x);
  }
  return { value: values };
}

function responseForm(c, attempt) {
  const spec = c.response;
  if (!spec) return h("p", { class: "hint" }, "No typed answer: the goal is checked on the example as it is now.");
  const saved = attempt ? attempt.response : null;
  if (spec.type === "choice") {
    return h(
      "fieldset",
      { class: "choice" },
      h("legend", null, spec.label),
      spec.options.map((o) => {
        const input = h("input", { type: "radio", name: `resp-${c.id}`, value: o.id, id: `resp-${c.id}-${o.id}` });
        input.checked = saved === o.id;
        return h("div", { class: "choice-row" }, input, h("label", { for: `resp-${c.id}-${o.id}` }, o.text));
      }),
    );
  }
  const names = spec.type === "shares" ? ["A", "B", "C"].slice(0, spec.size).map((l) => `${l} %`) : ["x", "y"].slice(0, spec.size);
  return h(
    "fieldset",
    { class: "numbers" },
    h("legend", null, spec.label),
    names.map((name, j) => {
      const input = h("input", { type: "text", inputmode: "decimal", id: `resp-${c.id}-${j}`, "aria-label": `${spec.label}: ${name}` });
      input.value = saved ? String(saved[j]) : "";
      return h("span", { class: "field" }, h("label", { for: `resp-${c.id}-${j}` }, name), input);
    }),
  );
}

function drawChallenge(nb, c, body) {
  const entry = entryOf(nb, c.id);
  const attempt = currentAttempt(entry);
  const n = entry ? entry.attempts.length : 1;
  const at = entry ? entry.current : 0;
  const opened = attempt ? attempt.help.filter((x) => x.kind === "hint").map((x) => x.detail) : [];
  const shown = opened.length ? Math.max(...opened) : 0;
  const form = h("div", { class: "response" }, responseForm(c, attempt));
  const status = h("p", { class: "form-error", role: "alert" });
  const check = h("button", { type: "button", "data-action": "check" }, "Check");
  check.addEventListener("click", () => {
    const read = readResponse(c, form);
    if (read.error) return text(status, read.error);
    const action = { kind: "submit", challenge: c.id };
    if (read.value !== null) action.response = read.value;
    studyAction(action);
  });
  const clear = h("button", { type: "button", "data-action": "clear" }, "Clear response");
  clear.addEventListener("click", () => studyAction({ kind: "clear", challenge: c.id }));
  const retry = h("button", { type: "button", "data-action": "retry" }, "New attempt");
  retry.addEventListener("click", () => studyAction({ kind: "retry", challenge: c.id }));
  const prev = h("button", { type: "button", "data-action": "prev-attempt", "aria-label": "Previous attempt" }, "‹ Previous");
  prev.disabled = at === 0;
  prev.addEventListener("click", () => studyAction({ kind: "goto", challenge: c.id, attempt: at - 1 }));
  const next = h("button", { type: "button", "data-action": "next-attempt", "aria-label": "Next attempt" }, "Next ›");
  next.disabled = at >= n - 1;
  next.addEventListener("click", () => studyAction({ kind: "goto", challenge: c.id, attempt: at + 1 }));
  const feedback = attempt && attempt.feedback;
  const hintButton = h("button", { type: "button", "data-action": "hint" }, `Show hint ${shown + 1} of ${c.hints.length}`);
  hintButton.hidden = shown >= c.hints.length;
  hintButton.addEventListener("click", () => studyAction({ kind: "help", help: "hint", detail: shown + 1, challenge: c.id }));
  fill(
    body,
    h("p", { class: "prompt" }, c.prompt),
    h("p", { class: "attempt-nav" }, prev, h("span", { class: "attempt-label" }, `Attempt ${at + 1} of ${n}`), next),
    form,
    status,
    h("p", { class: "controls" }, check, clear, retry),
    h(
      "p",
      { class: feedback ? (feedback.met ? "feedback met" : "feedback not-met") : "feedback", role: "status", "data-feedback": c.id },
      feedback ? [h("strong", null, feedback.met ? "✓ Goal met. " : "Not yet. "), feedback.words] : "",
    ),
    h("div", { class: "hints" }, h("ol", { class: "hint-list" }, c.hints.slice(0, shown).map((hint) => h("li", null, hint))), hintButton),
  );
}

function snapshot(body) {
  return Array.from(body.querySelectorAll("input"), (i) => [i.id, i.value, i.checked]);
}

function restore(body, typed) {
  for (const [id, value, checked] of typed) {
    const input = body.querySelector(`[id="${id}"]`);
    if (!input) continue;
    if (input.type === "radio") input.checked = checked;
    else input.value = value;
  }
}

/** What has the focus inside `body`: a button by its action, or an answer field by id and caret. */
function focusOf(body) {
  const el = document.activeElement;
  if (!el || !body.contains(el)) return null;
  const caret = el.type === "text" ? [el.selectionStart, el.selectionEnd] : null;
  return { action: el.dataset.action || null, id: el.id || null, caret };
}

/**
 * Give the focus back after a redraw replaced the elements: a learner typing an
 * answer while the server's answer to an earlier action arrives keeps typing
 * into the same field (and, for the same attempt, at the same caret).
 */
function refocus(body, focus, sameAttempt) {
  if (!focus) return;
  const el = focus.action
    ? body.querySelector(`[data-action="${focus.action}"]`)
    : focus.id && body.querySelector(`[id="${focus.id}"]`);
  if (!el) return;
  el.focus({ preventScroll: true });
  if (sameAttempt && focus.caret && el.type === "text") el.setSelectionRange(...focus.caret);
}

export function mountPractice(els) {
  const bodies = new Map();

  function build(nb) {
    if (!nb.practice || bodies.size) return;
    text(els.note, nb.practice.note);
    fill(
      els.list,
      nb.practice.challenges.map((c) => {
        const body = h("div", { class: "disclosure-body" });
        const details = h("details", { class: "disclosure challenge-item", id: `challenge-${c.id}`, "data-challenge": c.id }, h("summary", null, c.title), body);
        details.addEventListener("toggle", () => {
          if (details.open) studyAction({ kind: "open", challenge: c.id });
        });
        bodies.set(c.id, { details, body, key: "", drawn: "" });
        return details;
      }),
    );
  }

  function draw(nb) {
    build(nb);
    text(els.message, nb.messages.practice);
    els.message.hidden = !nb.messages.practice;
    if (!nb.practice) return;
    for (const c of nb.practice.challenges) {
      const part = bodies.get(c.id);
      const key = toJson(entryOf(nb, c.id));
      if (part.key === key && part.body.childElementCount) continue; // keep what the learner is typing
      part.key = key;
      const entry = entryOf(nb, c.id);
      const drawn = toJson([entry ? entry.current : 0, currentAttempt(entry)?.response ?? null]);
      // Same attempt, same saved response: keep what the learner has typed so far.
      const typed = part.drawn === drawn ? snapshot(part.body) : null;
      part.drawn = drawn;
      const focus = focusOf(part.body);
      drawChallenge(nb, c, part.body);
      if (typed) restore(part.body, typed);
      refocus(part.body, focus, typed !== null);
    }
  }

  subscribeNb(draw);
  draw(getNb());
}
