// The walk through the block, one step at a time: Embed → Project → Attend
// (per head) → Combine → Add & Norm → MLP → Add & Norm. Each step shows its
// caption and every tensor the server computed for it (matrix.js). The
// step list, Previous/Next and the Left/Right arrow keys move the stepper;
// the first visit to each step is recorded in the study history. Its labels
// are the lab's (answer.words.walk).

import { fill, h, text } from "../shared/dom.js";
import { tensorView } from "./matrix.js";
import { blockStudy, getBlock, setStep, subscribeBlock } from "./state.js";

export function mountWalk(root, words) {
  const list = h("ol", { class: "block-steps", "aria-label": words.steps_label });
  const title = h("h4", { id: "block-step-title", class: "block-step-title", tabindex: "-1" });
  const caption = h("p", { id: "block-step-caption", class: "block-caption" });
  const tensors = h("div", { id: "block-step-tensors", class: "block-tensors" });
  const prev = h("button", { type: "button", id: "block-prev" }, words.previous);
  const next = h("button", { type: "button", id: "block-next" }, words.next);
  const visited = new Set([0]);
  const go = (i) => {
    setStep(i);
    const at = getBlock().step;
    if (!visited.has(at)) {
      visited.add(at);
      blockStudy({ kind: "help", help: "stepper", detail: at + 1 });
    }
  };
  prev.addEventListener("click", () => go(getBlock().step - 1));
  next.addEventListener("click", () => go(getBlock().step + 1));
  const panel = h(
    "div",
    { class: "block-walk", id: "block-walk" },
    list,
    h("div", { class: "block-step", "aria-live": "polite" }, title, caption),
    h("p", { class: "controls" }, prev, next, h("span", { class: "hint" }, words.keys)),
    tensors,
  );
  panel.addEventListener("keydown", (event) => {
    if (event.target.closest("td, input")) return; // cells use the arrows to move between numbers
    if (event.key === "ArrowRight") go(getBlock().step + 1);
    else if (event.key === "ArrowLeft") go(getBlock().step - 1);
  });
  root.append(panel);

  let drawnList = "";
  let drawnKey = null;
  function draw(block) {
    const answer = block.answer;
    if (!answer) return;
    const steps = answer.steps;
    const key = steps.map((s) => s.title).join("|");
    if (key !== drawnList) {
      drawnList = key;
      fill(
        list,
        steps.map((s, i) => {
          const b = h("button", { type: "button", class: "block-step-link", "data-step": s.id }, s.link);
          b.addEventListener("click", () => go(i));
          return h("li", null, b);
        }),
      );
    }
    list.querySelectorAll("button").forEach((b, i) => {
      if (i === block.step) b.setAttribute("aria-current", "step");
      else b.removeAttribute("aria-current");
    });
    const step = steps[block.step];
    root.dataset.step = step.id;
    text(title, step.heading);
    text(caption, step.caption.text);
    prev.disabled = block.step === 0;
    next.disabled = block.step === steps.length - 1;
    if (drawnKey === answer && tensors.dataset.step === step.id) return;
    drawnKey = answer;
    tensors.dataset.step = step.id;
    fill(tensors, step.tensors.map((t) => tensorView(t, { idPrefix: "walk" })));
  }
  subscribeBlock(draw);
}
