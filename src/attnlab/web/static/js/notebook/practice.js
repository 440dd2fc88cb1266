// Practice: the list of challenges (lower on the page) and one active-challenge
// panel (js/shared/practice.js) that opens beside the part of the page the
// challenge uses: inside the explorer for the query and value challenges, next
// to the held table for the mask ones. The server checks every goal with the
// engine on the held example, keeps the rules of attempts and records each
// check, hint and shown answer (POST /api/notebook/study); this view only draws
// what it gets back. Every word is the lab's: the challenges' data, the study's
// answers and the page's (pageWords().practice).

import { fill, h, lines, text } from "../shared/dom.js";
import { attemptOf, button, challengePanel, drawAttempt, panelParts } from "../shared/practice.js";
import { pageWords } from "../shared/words.js";
import { getNb, loadWorked, studyAction, subscribeNb } from "./state.js";
import { getState } from "../explorer/state.js";

const WORDS = () => pageWords().practice;

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

/**
 * The one active-challenge panel, built once, its parts updated in place: the shared panel
 * (act(action) sends a study action for the open challenge, challenge() is that challenge) with
 * its title, its Close button and the offer to load the worked example.
 */
function buildPanel({ onClose, act, challenge }) {
  const words = WORDS();
  const p = challengePanel({ words, act, challenge, errorHidesVerdict: true });
  p.root = h("section", { id: "active-challenge", class: "active-challenge", "aria-labelledby": "active-challenge-title", tabindex: "-1" });
  p.title = h("h3", { id: "active-challenge-title" });
  p.offer = h("div", { class: "load-offer", hidden: true });
  p.offerText = h("p", null);
  p.load = button("load-worked", words.load);
  p.close = button("close", words.close);
  p.offer.append(p.offerText, h("p", null, words.load_offer), h("p", { class: "controls" }, p.load));
  p.close.addEventListener("click", onClose);
  p.load.addEventListener("click", () => loadWorked());
  fill(p.root, h("div", { class: "active-head" }, p.title, p.close), panelParts(p, p.offer));
  return p;
}

/**
 * The explorer's live challenge box for challenge `id` (the box whose "Hints and Check" opens it), or
 * null. While its panel is open the box hides: the panel states the same goal, in the same words, and
 * its Check gives the one verdict, so the page never shows the goal or "Not yet" twice.
 */
function liveBox(id) {
  const opener = id ? document.querySelector(`button[data-challenge="${id}"]`) : null;
  return opener ? opener.closest(".challenge") : null;
}

export function mountPractice(els) {
  let active = null; // the open challenge's id
  let returnTo = null; // the button that opened it: Close gives it the focus back
  let items = null;
  const byId = () => new Map(getNb().practice.challenges.map((c) => [c.id, c]));
  const panel = buildPanel({
    onClose: () => close(),
    act: (action) => studyAction({ ...action, challenge: active }),
    challenge: () => byId().get(active),
  });

  function open(id, from = null) {
    const c = byId().get(id);
    returnTo = from;
    const box = liveBox(active);
    if (box) box.hidden = false; // the challenge open before this one shows its box again
    active = id;
    const own = liveBox(id);
    if (own) own.hidden = true;
    panel.formKey = null; // (re)opening a challenge mounts its form afresh
    panel.showError("");
    (c.uses === "held" ? els.heldSlot : els.explorerSlot).append(panel.root);
    panel.root.hidden = false;
    draw(getNb());
    panel.root.focus({ preventScroll: true });
    panel.root.scrollIntoView({ block: "nearest" });
    studyAction({ kind: "open", challenge: id });
  }

  function close() {
    const was = active;
    const box = liveBox(was);
    if (box) box.hidden = false;
    active = null;
    panel.root.hidden = true;
    draw(getNb());
    const back = returnTo && returnTo.isConnected && !returnTo.closest("[hidden]") ? returnTo : null;
    if (back) back.focus();
    else if (was && items) items.get(was).querySelector("button").focus();
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
          opener.addEventListener("click", () => open(c.id, opener));
          const where = WORDS().where[c.uses === "held" ? "held" : "explorer"];
          const li = h("li", { class: "challenge-item", id: `challenge-${c.id}`, "data-challenge": c.id }, opener, h("span", { class: "hint where" }, where), h("span", { class: "item-status" }));
          items.set(c.id, li);
          return li;
        }),
      ),
    );
  }

  function drawPanel(nb, c) {
    panel.root.dataset.challenge = c.id;
    text(panel.title, c.title);
    const attempt = drawAttempt(panel, c, nb, {
      // A check on an example the challenge does not fit answers with the offer to load
      // the A/B/C example: the offer box by its button says that, once; the feedback line does not repeat it.
      feedback: (a) => (a && a.feedback && !a.feedback.load ? a.feedback : null),
      answer: (a) => a && a.answer,
    });
    const why = misfit(c);
    panel.offer.hidden = !why;
    text(panel.offerText, why || "");
    panel.reveal.hidden = Boolean(attempt && attempt.answer);
  }

  function draw(nb) {
    lines(els.message, nb.messages.practice);
    els.message.hidden = !nb.messages.practice.length;
    if (!nb.practice) return;
    if (!items) buildList(nb);
    for (const [id, li] of items) {
      const { entry } = attemptOf(nb, id);
      const met = entry && entry.attempts.some((a) => a.checks && a.checks.some((x) => x.met));
      li.classList.toggle("is-open", id === active);
      li.querySelector("button").setAttribute("aria-expanded", String(id === active));
      text(li.querySelector(".item-status"), met ? WORDS().met : "");
    }
    if (!active) return;
    drawPanel(nb, byId().get(active));
  }

  // The explorer's live challenge box opens its practice entry: hints, Check and history.
  // (It names the panel it controls only once the panel is on the page.)
  for (const opener of document.querySelectorAll("button[data-challenge]")) {
    opener.addEventListener("click", () => {
      if (!getNb().practice) return;
      open(opener.dataset.challenge, opener);
      opener.setAttribute("aria-controls", "active-challenge");
    });
  }

  panel.root.hidden = true;
  subscribeNb(draw);
  draw(getNb());
}
