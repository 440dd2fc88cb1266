// The guided playback "Watch Match → Share → Mix": a fixed, silent, captioned
// animation of the starting A/B/C example in which q moves in every step.
// Every frame comes from the server (GET /api/notebook/playback: the engine's
// trace, the explorer's geometry and the frame's own caption words at 10
// frames a second); this module picks the frame for the clock and draws its
// pictures and its words together, so they never disagree. It never reads or
// changes the learner's experiment. Under prefers-reduced-motion there is no
// animation: the captions become steps, each drawn as a still frame. Every word
// is the lab's: the frames' and captions' (the clock, the step titles) and the
// page's (pageWords().playback).

import { fill, h, s, text } from "../shared/dom.js";
import { drawKeyPlane } from "../explorer/match.js";
import { drawValuePlane } from "../explorer/mix.js";
import { getJSON } from "../shared/http.js";
import { pageWords } from "../shared/words.js";
import { recordHelp } from "./state.js";
import { SIZE } from "../shared/plot.js";
import { drawPie } from "../explorer/share.js";

const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");

/** The explorer's result shape for frame `f` (the script's constants merged in, nothing computed). */
function resultFor(script, f) {
  const fixed = script.display;
  return {
    trace: { ...f.trace, keys: script.keys, values: script.values, labels: script.labels, allowed: script.allowed },
    geometry: { ...f.geometry, hull: script.hull, key_view: script.key_view, value_view: script.value_view },
    display: {
      ...f.display,
      words: fixed.words,
      off: fixed.off,
      sources: f.display.sources.map((src, i) => ({ ...fixed.sources[i], ...src })),
    },
    compare: { active: false },
  };
}

export function mountPlayback(els) {
  const words = pageWords().playback;
  let script = null;
  let t = 0;
  let playing = false;
  let startedAt = 0;
  let raf = 0;
  let step = 0;
  const keyLayer = s("g");
  els.keys.setAttribute("viewBox", `0 0 ${SIZE} ${SIZE}`);
  els.keys.append(keyLayer);

  function frameAt(time) {
    const i = Math.min(script.frames.length - 1, Math.max(0, Math.round(time * script.fps)));
    return script.frames[i];
  }

  /** Draw frame `f`'s pictures with `words` (the frame's own, or its still step's). */
  function draw(f, caption, words) {
    const result = resultFor(script, f);
    drawKeyPlane(keyLayer, result, "pb-k");
    drawPie(els.pie, result);
    drawValuePlane(els.values, result, "pb-v");
    text(els.caption, words);
    els.root.dataset.phase = caption.phase;
    els.root.dataset.frame = String(script.frames.indexOf(f));
  }

  function drawTime() {
    const f = frameAt(t);
    draw(f, script.captions[f.caption], f.text);
    els.scrub.value = String(t);
    text(els.time, f.time.text); // the clock of the frame shown, in the lab's words
    els.scrub.setAttribute("aria-valuetext", f.time.spoken);
  }

  function tick(now) {
    t = Math.min(script.duration, (now - startedAt) / 1000);
    drawTime();
    if (t >= script.duration) return pause();
    raf = requestAnimationFrame(tick);
  }

  async function play() {
    if (!script) await load();
    if (!script || playing) return;
    if (t >= script.duration) t = 0;
    playing = true;
    // the words change with every frame while playing: a screen reader hears them when paused
    els.caption.setAttribute("aria-live", "off");
    startedAt = performance.now() - t * 1000;
    text(els.play, words.pause);
    els.play.setAttribute("aria-pressed", "true");
    recordHelp("playback");
    raf = requestAnimationFrame(tick);
  }

  function pause() {
    playing = false;
    els.caption.setAttribute("aria-live", "polite");
    cancelAnimationFrame(raf);
    text(els.play, words.play);
    els.play.setAttribute("aria-pressed", "false");
  }

  function showStep(n) {
    step = Math.max(0, Math.min(script.captions.length - 1, n));
    const caption = script.captions[step];
    draw(script.frames[caption.anchor_frame], caption, caption.text);
    text(els.stepTitle, caption.title);
    els.stepPrev.disabled = step === 0;
    els.stepNext.disabled = step === script.captions.length - 1;
    for (const li of els.steps.children) li.classList.toggle("current", Number(li.dataset.step) === step);
  }

  function layout() {
    const still = reduced.matches;
    els.animated.hidden = still;
    els.stepped.hidden = !still;
    if (!script) return;
    if (still) {
      pause();
      showStep(step);
    } else {
      drawTime();
    }
  }

  let loading = null;
  function load() {
    loading = loading || fetchScript();
    return loading;
  }

  async function fetchScript() {
    try {
      script = await getJSON("/api/notebook/playback");
    } catch {
      loading = null;
      text(els.caption, words.failed);
      return;
    }
    els.scrub.max = String(script.duration);
    fill(
      els.steps,
      script.captions.map((c, i) => h("li", { "data-step": i }, c.text)),
    );
    layout();
  }

  els.play.addEventListener("click", () => (playing ? pause() : play()));
  els.restart.addEventListener("click", () => {
    t = 0;
    if (playing) startedAt = performance.now();
    drawTime();
  });
  els.scrub.addEventListener("input", () => {
    t = Number(els.scrub.value);
    if (playing) startedAt = performance.now() - t * 1000;
    drawTime();
    recordHelp("playback");
  });
  els.stepPrev.addEventListener("click", () => showStep(step - 1));
  els.stepNext.addEventListener("click", () => {
    showStep(step + 1);
    recordHelp("playback");
  });
  reduced.addEventListener("change", layout);
  els.root.addEventListener("toggle", () => {
    if (els.root.open) load();
    else pause();
  });
  if (els.root.open) load();
}
