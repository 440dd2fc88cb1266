// Practice: the list of challenges (lower on the page) and one active-challenge
// panel that opens beside the part of the page the challenge uses: inside the
// explorer for the query and value challenges, next to the held table for the
// mask ones. The panel has the prompt, the response form, Check / Clear
// response / New attempt, moves between attempts, tiered hints and "Show
// answer". The server checks every goal with the engine on the held example,
// keeps the rules of attempts and records each check, hint and shown answer
// (POST /api/notebook/study); this view only draws what it gets back.
//
// The form is mounted once per (challenge, attempt, saved response) and
// otherwise updated in place, so what the learner is typing, and the caret,
// survive every redraw without snapshots. Every word is the lab's: the
// challenges' data, the study's answers and the page's (pageWords().practice).

import { fill, h, lines, text } from "../shared/dom.js";
import { toJson } from "../shared/json.js";
import { pageWords } from "../shared/words.js";
import { getNb, loadWorked, studyAction, subscribeNb } from "./state.js";
import { getState } from "../explorer/state.js";
import { readResponse } from "../shared/response.js";

const WORDS = () => pageWords().practice;

function entryOf(nb, id) {
  return nb.study.challenges[id] || null;
}

function currentAttempt(entry) {
  return entry ? entry.attempts[entry.current] : null;
}

/** The panel words for challenge `c` now: its current attempt's history group's, or the fresh ones. */
function panelOf(nb, c, entry) {
  if (!entry) return c.panel;
  const group = nb.history.find((g) => g.challenge === c.id && g.attempt === entry.current + 1);
  return group ? group.panel : c.panel;
}

function responseForm(c, attempt) {
  const spec = c.response;
  if (!spec) return h("p", { class: "hint" }, WORDS().no_typed);
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
  return h(
    "fieldset",
    { class: "numbers" },
    h("legend", null, spec.label),
    spec.fields.map((f, j) => {
      const input = h("input", { type: "text", inputmode: "decimal", id: `resp-${c.id}-${j}`, "aria-label": f.label });
      input.value = saved ? String(saved[j]) : "";
      return h("span", { class: "field" }, h("label", { for: `resp-${c.id}-${j}` }, f.name), input);
    }),
  );
}

/**
 * Why the held example cannot try challenge `c`: the first of the held view's worked_fit
 * sentences the challenge needs (an example of one query, other sources, other keys),
 * or null. The server says the same on Check.
 */
function misfit(c) {
  const view = getState().held;
  if (!view) return null;
  const need = c.needs.find((name) => view.worked_fit[name]);
  return need ? view.worked_fit[need].text : null;
}

/** A button whose press keeps it (pointer capture): a redraw that moves it under the pointer loses no click. */
function button(action, label, attrs = {}) {
  const b = h("button", { type: "button", "data-action": action, ...attrs }, label);
  b.addEventListener("pointerdown", (e) => b.setPointerCapture(e.pointerId));
  return b;
}

/** The one active-challenge panel: built once, its parts updated in place. */
function buildPanel(onClose) {
  const words = WORDS();
  const p = {
    root: h("section", { id: "active-challenge", class: "active-challenge", "aria-labelledby": "active-challenge-title", tabindex: "-1" }),
    title: h("h3", { id: "active-challenge-title" }),
    prompt: h("p", { class: "prompt" }),
    prev: button("prev-attempt", words.prev, { "aria-label": words.prev_name }),
    label: h("span", { class: "attempt-label" }),
    next: button("next-attempt", words.next, { "aria-label": words.next_name }),
    form: h("div", { class: "response" }),
    error: h("p", { class: "form-error", role: "alert" }),
    check: button("check", words.check),
    clear: button("clear", words.clear),
    retry: button("retry", words.retry),
    feedback: h("p", { class: "feedback", role: "status" }),
    offer: h("div", { class: "load-offer", hidden: true }),
    offerText: h("p", null),
    load: button("load-worked", words.load),
    hints: h("ol", { class: "hint-list" }),
    hint: button("hint", ""),
    reveal: button("answer", words.reveal),
    answer: h("p", { class: "answer", hidden: true }),
    close: button("close", words.close),
  };
  p.offer.append(p.offerText, h("p", null, words.load_offer), h("p", { class: "controls" }, p.load));
  p.close.addEventListener("click", onClose);
  fill(
    p.root,
    h("div", { class: "active-head" }, p.title, p.close),
    p.prompt,
    h("p", { class: "attempt-nav" }, p.prev, p.label, p.next),
    p.form,
    p.error,
    h("p", { class: "controls" }, p.check, p.clear, p.retry),
    p.feedback,
    p.offer,
    h("div", { class: "hints" }, p.hints, h("p", { class: "controls" }, p.hint, p.reveal)),
    p.answer,
  );
  return p;
}

export function mountPractice(els) {
  let active = null; // the open challenge's id
  let formKey = "";
  let items = null;
  const panel = buildPanel(() => close());
  const byId = () => new Map(getNb().practice.challenges.map((c) => [c.id, c]));

  function current() {
    const nb = getNb();
    return { nb, c: byId().get(active), entry: entryOf(nb, active) };
  }

  function showError(message) {
    // a new input error never sits beside an old "✓ Goal met": the old verdict is hidden
    text(panel.error, message);
    panel.feedback.hidden = Boolean(message);
  }

  panel.check.addEventListener("click", () => {
    const { c } = current();
    const read = readResponse(c, panel.form);
    if (read.error) return showError(read.error);
    showError("");
    const action = { kind: "submit", challenge: c.id };
    if (read.value !== null) action.response = read.value;
    studyAction(action);
  });
  panel.form.addEventListener("input", () => showError(""));
  panel.clear.addEventListener("click", () => studyAction({ kind: "clear", challenge: active }));
  panel.retry.addEventListener("click", () => studyAction({ kind: "retry", challenge: active }));
  panel.prev.addEventListener("click", () => studyAction({ kind: "goto", challenge: active, attempt: current().entry.current - 1 }));
  panel.next.addEventListener("click", () => studyAction({ kind: "goto", challenge: active, attempt: current().entry.current + 1 }));
  panel.hint.addEventListener("click", () => studyAction({ kind: "help", help: "hint", detail: Number(panel.hint.dataset.next), challenge: active }));
  panel.reveal.addEventListener("click", () => studyAction({ kind: "help", help: "answer", challenge: active }));
  panel.load.addEventListener("click", () => loadWorked());

  function open(id) {
    const c = byId().get(id);
    active = id;
    formKey = "";
    showError("");
    (c.uses === "held" ? els.heldSlot : els.explorerSlot).append(panel.root);
    panel.root.hidden = false;
    draw(getNb());
    panel.root.focus({ preventScroll: true });
    panel.root.scrollIntoView({ block: "nearest" });
    studyAction({ kind: "open", challenge: id });
  }

  function close() {
    const was = active;
    active = null;
    panel.root.hidden = true;
    draw(getNb());
    if (was && items) items.get(was).querySelector("button").focus();
  }

  function buildList(nb) {
    items = new Map();
    text(els.note, nb.practice.note);
    fill(
      els.list,
      h(
        "ul",
        { class: "challenge-list" },
        nb.practice.challenges.map((c) => {
          const opener = h("button", { type: "button", class: "challenge-open", "aria-controls": "active-challenge" }, c.title);
          opener.addEventListener("click", () => open(c.id));
          const where = WORDS().where[c.uses === "held" ? "held" : "explorer"];
          const li = h("li", { class: "challenge-item", id: `challenge-${c.id}`, "data-challenge": c.id }, opener, h("span", { class: "hint where" }, where), h("span", { class: "item-status" }));
          items.set(c.id, li);
          return li;
        }),
      ),
    );
  }

  function drawPanel(nb, c, entry) {
    const attempt = currentAttempt(entry);
    const n = entry ? entry.attempts.length : 1;
    const at = entry ? entry.current : 0;
    const key = toJson([c.id, at, attempt ? attempt.response : null]);
    if (key !== formKey) {
      // another challenge, attempt or saved response: mount its form (once)
      formKey = key;
      fill(panel.form, responseForm(c, attempt));
    }
    const words = panelOf(nb, c, entry); // the lab's words: "Attempt 2 of 3", "Show hint 2 of 3"
    panel.root.dataset.challenge = c.id;
    text(panel.title, c.title);
    text(panel.prompt, c.prompt);
    text(panel.label, words.attempt.text);
    panel.prev.disabled = at === 0;
    panel.next.disabled = at >= n - 1;
    // A check on an example the challenge does not fit answers with the offer to load
    // the A/B/C example: the offer box by its button says that, once; the feedback line does not repeat it.
    const feedback = attempt && attempt.feedback && !attempt.feedback.load ? attempt.feedback : null;
    panel.feedback.dataset.feedback = c.id;
    panel.feedback.className = feedback ? (feedback.met ? "feedback met" : "feedback not-met") : "feedback";
    if (feedback) fill(panel.feedback, h("strong", null, feedback.verdict.text), " ", feedback.words.text);
    else fill(panel.feedback);
    const why = misfit(c);
    panel.offer.hidden = !why;
    text(panel.offerText, why || "");
    const help = attempt ? attempt.help : [];
    const opened = help.filter((x) => x.kind === "hint").map((x) => x.detail);
    const shown = opened.length ? Math.max(...opened) : 0;
    fill(panel.hints, c.hints.slice(0, shown).map((hint) => h("li", null, hint)));
    text(panel.hint, words.hint ? words.hint.text : "");
    panel.hint.dataset.next = String(shown + 1);
    panel.hint.hidden = !words.hint;
    const answer = attempt && attempt.answer;
    panel.answer.dataset.answer = c.id;
    panel.answer.hidden = !answer;
    if (answer) fill(panel.answer, h("strong", null, WORDS().answer), answer);
    else fill(panel.answer);
    panel.reveal.hidden = Boolean(answer);
  }

  function draw(nb) {
    lines(els.message, nb.messages.practice);
    els.message.hidden = !nb.messages.practice.length;
    if (!nb.practice) return;
    if (!items) buildList(nb);
    for (const [id, li] of items) {
      const entry = entryOf(nb, id);
      const met = entry && entry.attempts.some((a) => a.checks && a.checks.some((x) => x.met));
      li.classList.toggle("is-open", id === active);
      li.querySelector("button").setAttribute("aria-expanded", String(id === active));
      text(li.querySelector(".item-status"), met ? WORDS().met : "");
    }
    if (!active) return;
    const c = byId().get(active);
    drawPanel(nb, c, entryOf(nb, active));
  }

  // The explorer's live challenge box opens its practice entry: hints, Check and history.
  // (It names the panel it controls only once the panel is on the page.)
  for (const opener of document.querySelectorAll("button[data-challenge]")) {
    opener.addEventListener("click", () => {
      if (!getNb().practice) return;
      open(opener.dataset.challenge);
      opener.setAttribute("aria-controls", "active-challenge");
    });
  }

  panel.root.hidden = true;
  subscribeNb(draw);
  draw(getNb());
}
