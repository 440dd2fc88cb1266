// A practice challenge's panel, as the notebook, the block and the connection labs show it: the
// prompt, the response form, Check / Clear response / New attempt, moves between attempts, tiered
// hints and "Show the answer"; and the study history's groups. The server checks every goal and
// keeps the attempts' rules; the panel only draws the study it gets back.
//
// A panel's parts are built once and updated in place; its form is mounted once per (challenge,
// attempt, saved response). So a study answer that arrives while the learner types or presses Check
// never replaces the field being typed in or the button being pressed.
// Every word is the lab's: the challenge data, the study's (the feedback, the history's groups and
// their panel words: "Attempt 2 of 3", the next hint's button) and the panel's `words` (check, clear,
// retry, previous, previous_label, next, next_label, reveal, answer, no_response).
// Each page keeps its own names (`look`): the form's id prefix and the class names its style sheet uses.

import { fill, h, text } from "./dom.js";
import { toJson } from "./json.js";
import { readResponse, responseForm } from "./response.js";

/** The main page's names (the notebook's style sheet); a page gives those it names otherwise. */
const LOOK = {
  form: "resp", // the response inputs' id prefix: resp-<challenge>-<field>
  choice: "choice",
  choiceRow: "choice-row",
  numbers: "numbers",
  field: "field",
  nav: "attempt-nav",
  error: "form-error",
  feedback: "feedback",
  answer: "answer",
};

/**
 * A button whose press keeps it: the pointer is captured on press, so the click lands on this
 * button even when a study answer redraws the page above it between press and release.
 */
export function button(action, label, attrs = {}) {
  const b = h("button", { type: "button", "data-action": action, ...attrs }, label);
  b.addEventListener("pointerdown", (e) => b.setPointerCapture(e.pointerId));
  return b;
}

/**
 * One challenge panel, built once; `drawAttempt` updates it from the study.
 * act(action): sends a study action ({kind, ...}) for the challenge the panel shows, challenge() that
 * challenge. errorHidesVerdict: an input error hides the last verdict while it shows (the notebook's).
 * Returns the panel's parts; `panelParts` lays them out.
 */
export function challengePanel({ look = {}, words, act, challenge, errorHidesVerdict = false }) {
  const names = { ...LOOK, ...look };
  const p = {
    look: names,
    words,
    prompt: h("p", { class: "prompt" }),
    prev: button("prev-attempt", words.previous, { "aria-label": words.previous_label }),
    label: h("span", { class: "attempt-label" }),
    next: button("next-attempt", words.next, { "aria-label": words.next_label }),
    form: h("div", { class: "response" }),
    error: h("p", { class: names.error, role: "alert" }),
    check: button("check", words.check),
    clear: button("clear", words.clear),
    retry: button("retry", words.retry),
    feedback: h("p", { class: names.feedback, role: "status" }),
    hints: h("ol", { class: "hint-list" }),
    hint: button("hint", ""),
    reveal: button("answer", words.reveal),
    answer: h("p", { class: names.answer, hidden: true }),
    at: 0, // the attempt shown
    shown: 0, // how many of its hints are open
    formKey: null,
  };
  p.showError = (message) => {
    text(p.error, message);
    if (errorHidesVerdict) p.feedback.hidden = Boolean(message); // never an input error beside an old "✓ Goal met"
  };
  p.check.addEventListener("click", () => {
    const read = readResponse(challenge(), p.form);
    if (read.error) return p.showError(read.error);
    p.showError("");
    const action = { kind: "submit" };
    if (read.value !== null) action.response = read.value;
    act(action);
  });
  p.form.addEventListener("input", () => p.showError(""));
  p.clear.addEventListener("click", () => act({ kind: "clear" }));
  p.retry.addEventListener("click", () => act({ kind: "retry" }));
  p.prev.addEventListener("click", () => act({ kind: "goto", attempt: p.at - 1 }));
  p.next.addEventListener("click", () => act({ kind: "goto", attempt: p.at + 1 }));
  p.hint.addEventListener("click", () => act({ kind: "help", help: "hint", detail: p.shown + 1 }));
  p.reveal.addEventListener("click", () => act({ kind: "help", help: "answer" }));
  return p;
}

/** The panel's parts in page order; `afterFeedback` (a page's own part) stands between the verdict and the hints. */
export function panelParts(p, afterFeedback = null) {
  return [
    p.prompt,
    h("p", { class: p.look.nav }, p.prev, p.label, p.next),
    p.form,
    p.error,
    h("p", { class: "controls" }, p.check, p.clear, p.retry),
    p.feedback,
    afterFeedback,
    h("div", { class: "hints" }, p.hints, h("p", { class: "controls" }, p.hint, p.reveal)),
    p.answer,
  ];
}

/** The study's entry for challenge `id` (null before its first action) and its current attempt. */
export function attemptOf(st, id) {
  const entry = st.study.challenges[id] || null;
  return { entry, attempt: entry ? entry.attempts[entry.current] : null };
}

/** The panel words for challenge `c` now: its current attempt's history group's, or the fresh ones. */
function panelWords(st, c, entry) {
  if (!entry) return c.panel;
  const group = st.history.find((g) => g.challenge === c.id && g.attempt === entry.current + 1);
  return group ? group.panel : c.panel;
}

/** Whether the learner asked for the answer in this attempt (the answer's words are then the page state's). */
function revealed(st, c, attempt) {
  return attempt && attempt.help.some((x) => x.kind === "answer") ? st.revealed[c.id] : null;
}

/**
 * Draw challenge `c`'s current attempt into panel `p` from `st` (its study, history and revealed answers).
 * shown: what of the attempt the page shows, when not its verdict and the revealed answer's words:
 * feedback(attempt) the verdict, answer(attempt) the answer's words (each null for none).
 * Returns the current attempt (null before the first action).
 */
export function drawAttempt(p, c, st, shown = {}) {
  const { entry, attempt } = attemptOf(st, c.id);
  const n = entry ? entry.attempts.length : 1;
  p.at = entry ? entry.current : 0;
  const formKey = toJson([c.id, p.at, attempt ? attempt.response : null]);
  if (formKey !== p.formKey) {
    // another challenge, attempt or saved response: mount its form (what the learner types otherwise stays)
    p.formKey = formKey;
    fill(p.form, responseForm(c, attempt ? attempt.response : null, p.look, p.words.no_response));
    p.showError("");
  }
  const panel = panelWords(st, c, entry);
  text(p.prompt, c.prompt);
  text(p.label, panel.attempt.text);
  p.prev.disabled = p.at === 0;
  p.next.disabled = p.at >= n - 1;
  const help = attempt ? attempt.help : [];
  p.shown = Math.max(0, ...help.filter((x) => x.kind === "hint").map((x) => x.detail));
  fill(p.hints, c.hints.slice(0, p.shown).map((x) => h("li", null, x)));
  p.hint.hidden = !panel.hint;
  text(p.hint, panel.hint ? panel.hint.text : "");
  const feedback = shown.feedback ? shown.feedback(attempt) : attempt && attempt.feedback;
  p.feedback.dataset.feedback = c.id;
  p.feedback.className = feedback ? `${p.look.feedback} ${feedback.met ? "met" : "not-met"}` : p.look.feedback;
  if (feedback) fill(p.feedback, h("strong", null, feedback.verdict.text), " ", feedback.words.text);
  else fill(p.feedback);
  const answer = shown.answer ? shown.answer(attempt) : revealed(st, c, attempt);
  p.answer.dataset.answer = c.id;
  p.answer.hidden = !answer;
  if (answer) fill(p.answer, h("strong", null, p.words.answer), " ", answer);
  else fill(p.answer);
  return attempt;
}

/**
 * One disclosure per challenge, appended to `list`, each holding its own panel (the block's and the
 * labs' practice). send(action): the page's study action; opening a disclosure sends "open".
 * look: the panel's names and the disclosure's (disclosure: its class, disclosureId: its id prefix,
 * body: its body's class). Returns the panels by challenge id.
 */
export function challengeDisclosures(list, challenges, { look, words, send }) {
  const panels = new Map();
  for (const c of challenges) {
    const act = (action) => send({ challenge: c.id, ...action });
    const p = challengePanel({ look, words, act, challenge: () => c });
    const body = h("div", { class: look.body }, panelParts(p));
    const details = h("details", { class: look.disclosure, id: `${look.disclosureId}-${c.id}`, "data-challenge": c.id }, h("summary", null, c.title), body);
    details.addEventListener("toggle", () => details.open && act({ kind: "open" }));
    panels.set(c.id, p);
    list.append(details);
  }
  return panels;
}

/**
 * The study history, one section a group (a challenge's attempt, or "before" any): its heading, every
 * check made on the attempt (right or not yet, in order; or, where a study keeps no list, its last
 * check's line) and the help it used; `empty` when there is none yet.
 * look: group (the section's class), groupChallenge (the attribute naming its challenge), heading (its tag).
 * labels: the lists' names for a screen reader ({checks, help}: the page's words).
 */
export function drawHistory(root, history, empty, look, labels = {}) {
  if (!history.length) return fill(root, h("p", { class: "hint" }, empty));
  fill(
    root,
    history.map((g) => {
      let checked = null;
      if (g.checks && g.checks.length) {
        checked = h("ul", { class: "history-checks", "aria-label": labels.checks }, g.checks.map((c) => h("li", { class: c.met ? "check-met" : "check-not-met", "data-checked": c.met ? "met" : "not-met" }, c.label)));
      } else if (g.checked && !g.checks) {
        checked = h("p", { "data-checked": g.checked.claims.met ? "met" : "not-met" }, g.checked.text);
      }
      return h(
        "section",
        { class: look.group, [look.groupChallenge]: g.challenge || "before", "data-attempt": g.attempt ? String(g.attempt) : "", "aria-label": g.heading },
        h(look.heading, null, g.heading),
        checked,
        h("ul", { class: "history-help", "aria-label": labels.help }, g.help.map((l) => h("li", null, l))),
      );
    }),
  );
}
