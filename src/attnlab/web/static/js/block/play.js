// "Watch the block": a captioned playback of the walk. A diagram of the block
// (one box per step) lights the current step while a marker carries the token
// rows from box to box; the caption is the server's caption for that step.
// Under prefers-reduced-motion nothing moves: the same captions become steps
// with still pictures (Previous / Next). It never changes the learner's block.
// Its pace and every label are the lab's: each caption's start_s and end_s, and
// answer.words.play.

import { fill, h, s, text } from "../shared/dom.js";
import { tensorView } from "./matrix.js";
import { blockStudy, getBlock, subscribeBlock } from "./state.js";

const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");
const W = 640;
const BOX_H = 44;

/** Box i's centre in the diagram: two rows of four boxes, read left to right. */
function centre(i, n) {
  const perRow = Math.ceil(n / 2);
  const col = i % perRow;
  const row = Math.floor(i / perRow);
  const w = W / perRow;
  return [w * col + w / 2, 40 + row * 80];
}

/** How long caption `i` of the playback stays, in milliseconds (the server's timing). */
function stepMs(i) {
  const c = getBlock().answer.playback.captions[i];
  return (c.end_s - c.start_s) * 1000;
}

export function mountPlayback(root, words) {
  const svg = s("svg", { id: "block-play-diagram", class: "block-diagram", viewBox: `0 0 ${W} 150`, role: "img", "aria-label": words.diagram });
  const caption = h("p", { id: "block-play-caption", class: "playback-caption", "aria-live": "polite" });
  const play = h("button", { type: "button", id: "block-play", "aria-pressed": "false" }, words.play);
  const prev = h("button", { type: "button", id: "block-play-prev" }, words.previous);
  const next = h("button", { type: "button", id: "block-play-next" }, words.next);
  const mode = h("p", { id: "block-play-mode", class: "hint" });
  const stage = h("div", { id: "block-play-stage", class: "block-tensors block-play-stage" });
  root.append(svg, caption, mode, h("p", { class: "controls" }, play, prev, next), stage);

  let at = 0;
  let timer = 0;
  let raf = 0;
  let marker = null;
  let boxes = [];
  let drawnFor = "";
  let answers = 0; // counts the walks drawn, so a new walk redraws the stage
  let lastAnswer = null;

  function build(steps) {
    const key = steps.map((st) => st.title).join("|");
    if (key === drawnFor) return;
    drawnFor = key;
    const w = W / Math.ceil(steps.length / 2);
    boxes = steps.map((st, i) => {
      const [x, y] = centre(i, steps.length);
      return s("g", { class: "diagram-box", "data-step": st.id }, s("rect", { x: x - w / 2 + 6, y: y - BOX_H / 2, width: w - 12, height: BOX_H, rx: 6 }), s("text", { x, y: y + 5, class: "diagram-text" }, st.title));
    });
    marker = s("circle", { r: 7, class: "diagram-marker" });
    fill(svg, boxes, marker);
  }

  function place(i, fraction) {
    const steps = getBlock().answer.steps;
    const [x0, y0] = centre(i, steps.length);
    const [x1, y1] = centre(Math.min(i + 1, steps.length - 1), steps.length);
    marker.setAttribute("cx", String(x0 + (x1 - x0) * fraction));
    marker.setAttribute("cy", String(y0 - BOX_H / 2 - 2 + (y1 - y0) * fraction));
  }

  function show(i) {
    const steps = getBlock().answer.steps;
    at = Math.max(0, Math.min(i, steps.length - 1));
    boxes.forEach((b, j) => b.classList.toggle("current", j === at));
    root.dataset.phase = steps[at].id;
    text(caption, getBlock().answer.playback.captions[at].shown);
    prev.disabled = at === 0;
    next.disabled = at === steps.length - 1;
    place(at, 0);
    // The step's pictures: its last tensors (what the step hands on), faded in unless motion is reduced.
    if (stage.dataset.step !== steps[at].id || stage.dataset.answer !== String(answers)) {
      stage.dataset.step = steps[at].id;
      stage.dataset.answer = String(answers);
      fill(stage, steps[at].tensors.slice(-2).map((t) => tensorView(t, { idPrefix: "play" })));
      stage.classList.remove("enter");
      void stage.offsetWidth; // restart the fade
      stage.classList.add("enter");
    }
  }

  function stop() {
    clearTimeout(timer);
    cancelAnimationFrame(raf);
    play.setAttribute("aria-pressed", "false");
    text(play, words.play);
  }

  function run() {
    const started = performance.now();
    const ms = stepMs(at);
    const tick = (now) => {
      const f = Math.min(1, (now - started) / ms);
      if (f > 0.75) place(at, (f - 0.75) / 0.25); // the rows travel to the next box in the last quarter
      if (f < 1) raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    timer = setTimeout(() => {
      if (at >= getBlock().answer.steps.length - 1) return stop();
      show(at + 1);
      run();
    }, ms);
  }

  play.addEventListener("click", () => {
    if (play.getAttribute("aria-pressed") === "true") return stop();
    blockStudy({ kind: "help", help: "playback" });
    if (at >= getBlock().answer.steps.length - 1) show(0);
    play.setAttribute("aria-pressed", "true");
    text(play, words.pause);
    run();
  });
  prev.addEventListener("click", () => (stop(), show(at - 1)));
  next.addEventListener("click", () => (stop(), show(at + 1)));

  const applyMotion = () => {
    play.hidden = reduced.matches;
    if (reduced.matches) stop();
    text(mode, reduced.matches ? words.reduced : words.moving.text);
  };
  reduced.addEventListener("change", applyMotion);
  applyMotion();

  subscribeBlock((block) => {
    if (!block.answer) return;
    if (block.answer !== lastAnswer) {
      lastAnswer = block.answer;
      answers += 1;
    }
    build(block.answer.steps);
    show(at);
  });
}
