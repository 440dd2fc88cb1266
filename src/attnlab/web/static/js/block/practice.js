// The block's challenges: each a disclosure with its prompt, its response
// form, Check / Clear response / New attempt, moves between attempts, tiered
// hints and "Show the answer". The server checks every goal with the engine on
// the learner's block and keeps the attempts' rules (POST /api/block/study);
// its feedback says which way to go, not the answer. This view only draws the
// study it gets back, and the block part's study history beside the page's.

import { fill, h, text } from "../shared/dom.js";
import { toJson } from "../shared/json.js";
import { blockStudy, subscribeBlock } from "./state.js";
import { readResponse } from "../shared/response.js";

function attemptOf(block, id) {
  const entry = block.study.challenges[id] || null;
  return { entry, attempt: entry ? entry.attempts[entry.current] : null };
}

function responseForm(c, saved) {
  const spec = c.response;
  if (!spec) return h("p", { class: "hint" }, "No typed answer: the goal is checked on the block as you have set it above.");
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
    spec.names.map((name, j) => {
      const id = `bresp-${c.id}-${j}`;
      const input = h("input", { type: "text", inputmode: "decimal", id, "aria-label": `${spec.label}: ${name}` });
      input.value = saved ? String(saved[j]) : "";
      return h("span", { class: "field" }, h("label", { for: id }, name), input);
    }),
  );
}

function drawChallenge(block, c, body) {
  const { entry, attempt } = attemptOf(block, c.id);
  const n = entry ? entry.attempts.length : 1;
  const at = entry ? entry.current : 0;
  const help = attempt ? attempt.help : [];
  const shown = Math.max(0, ...help.filter((x) => x.kind === "hint").map((x) => x.detail));
  const answered = help.some((x) => x.kind === "answer");
  const form = h("div", { class: "response" }, responseForm(c, attempt ? attempt.response : null));
  const status = h("p", { class: "form-error", role: "alert" });
  const act = (action) => blockStudy({ challenge: c.id, ...action });
  const button = (action, label, onClick, extra = {}) => {
    const b = h("button", { type: "button", "data-action": action, ...extra }, label);
    b.addEventListener("click", onClick);
    return b;
  };
  const check = button("check", "Check", () => {
    const read = readResponse(c, form);
    if (read.error) return text(status, read.error);
    const action = { kind: "submit" };
    if (read.value !== null) action.response = read.value;
    act(action);
  });
  const prev = button("prev-attempt", "‹ Previous", () => act({ kind: "goto", attempt: at - 1 }), { "aria-label": "Previous attempt" });
  prev.disabled = at === 0;
  const next = button("next-attempt", "Next ›", () => act({ kind: "goto", attempt: at + 1 }), { "aria-label": "Next attempt" });
  next.disabled = at >= n - 1;
  const hint = button("hint", `Show hint ${shown + 1} of ${c.hints.length}`, () => act({ kind: "help", help: "hint", detail: shown + 1 }));
  hint.hidden = shown >= c.hints.length;
  const reveal = button("answer", "Show the answer", () => act({ kind: "help", help: "answer" }));
  const feedback = attempt && attempt.feedback;
  const revealed = block.revealed[c.id];
  fill(
    body,
    h("p", { class: "prompt" }, c.prompt),
    h("p", { class: "attempt-nav" }, prev, h("span", { class: "attempt-label" }, `Attempt ${at + 1} of ${n}`), next),
    form,
    status,
    h("p", { class: "controls" }, check, button("clear", "Clear response", () => act({ kind: "clear" })), button("retry", "New attempt", () => act({ kind: "retry" }))),
    h(
      "p",
      { class: feedback ? (feedback.met ? "feedback met" : "feedback not-met") : "feedback", role: "status", "data-feedback": c.id },
      feedback ? [h("strong", null, feedback.met ? "✓ Goal met. " : "Not yet. "), feedback.words] : "",
    ),
    h("div", { class: "hints" }, h("ol", { class: "hint-list" }, c.hints.slice(0, shown).map((x) => h("li", null, x))), h("p", { class: "controls" }, hint, reveal)),
    answered && revealed ? h("p", { class: "block-answer", "data-answer": c.id }, h("strong", null, "Answer (recorded as help): "), revealed) : null,
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
  (historyPanel || root).append(h("h4", null, "From one head to a transformer block"), history);

  subscribeBlock((block) => {
    text(message, block.studyMessage);
    message.hidden = !block.studyMessage;
    if (block.practice && !parts.size) {
      text(note, block.practice.note);
      for (const c of block.practice.challenges) {
        const body = h("div", { class: "disclosure-body" });
        const details = h("details", { class: "disclosure block-challenge", id: `block-challenge-${c.id}`, "data-challenge": c.id }, h("summary", null, c.title), body);
        details.addEventListener("toggle", () => details.open && blockStudy({ kind: "open", challenge: c.id }));
        parts.set(c.id, { body, key: null, drawn: null });
        list.append(details);
      }
    }
    if (!block.practice) return;
    for (const c of block.practice.challenges) {
      const part = parts.get(c.id);
      const key = toJson([attemptOf(block, c.id).attempt, block.revealed[c.id] || null, attemptOf(block, c.id).entry?.current ?? 0]);
      if (part.key === key) continue; // keep what the learner is typing
      part.key = key;
      // Same attempt, same saved response: keep what the learner has typed so far.
      const { entry, attempt } = attemptOf(block, c.id);
      const drawn = toJson([entry ? entry.current : 0, attempt ? attempt.response : null]);
      const typed = part.drawn === drawn ? Array.from(part.body.querySelectorAll("input"), (i) => [i.id, i.value, i.checked]) : [];
      const focused = part.body.contains(document.activeElement) ? document.activeElement.id || document.activeElement.dataset.action : null;
      part.drawn = drawn;
      drawChallenge(block, c, part.body);
      for (const [id, value, checked] of typed) {
        const input = part.body.querySelector(`[id="${id}"]`);
        if (!input) continue;
        if (input.type === "radio") input.checked = checked;
        else input.value = value;
      }
      if (focused) {
        const el = part.body.querySelector(`[id="${focused}"]`) || part.body.querySelector(`[data-action="${focused}"]`);
        if (el) el.focus({ preventScroll: true });
      }
    }
    if (!block.history.length) fill(history, h("p", { class: "hint" }, "No help used yet in the block section."));
    else
      fill(
        history,
        block.history.map((g) => {
          // The attempt's last check, from the study the server returned (the history lists help only).
          const entry = g.challenge ? block.study.challenges[g.challenge] : null;
          const fb = entry && g.attempt ? entry.attempts[g.attempt - 1].feedback : null;
          const checked = fb ? h("p", { class: fb.met ? "check-met" : "check-not-met", "data-checked": fb.met ? "met" : "not-met" }, fb.met ? "✓ Checked: goal met" : "Checked: not yet") : null;
          return h("section", { class: "history-group", "data-block-challenge": g.challenge || "before", "data-attempt": g.attempt ? String(g.attempt) : "", "aria-label": g.heading }, h("h5", null, g.heading), checked, h("ul", null, g.help.map((l) => h("li", null, l))));
        }),
      );
  });
}
