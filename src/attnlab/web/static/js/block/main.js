// Boot the section "From one head to a transformer block": build its parts
// once, then each redraws from the block state (state.js) on every
// answer. Every number and every word comes from POST /api/block (the words'
// table answer.words: headings, labels, hints); nothing is computed or worded here.
// Its data (~75 KB) loads only when the section is about to be seen (within
// LOAD_MARGIN of the viewport) or something in it gets focus: the page's first
// load does not pay for a section far below the explorer.

import { byId, fill, h, text } from "../shared/dom.js";
import { download } from "../shared/download.js";
import { ApiError, postJSON } from "../shared/http.js";
import { mountWalk } from "./walk.js";
import { mountNormCompare, mountSwitches } from "./norm.js";
import { mountHeads } from "./heads.js";
import { mountRope } from "./rope.js";
import { mountEditor } from "./edit.js";
import { mountPlayback } from "./play.js";
import { mountBlockPractice } from "./practice.js";
import { blockStudy, firstAnswer, getBlock, redrawBlock, startBlock, subscribeBlock } from "./state.js";

/** One part of the section: its heading and intro are the lab's (answer.words.parts[key]). */
function part(id, words) {
  return h("section", { class: "nb-panel block-part", id, "aria-labelledby": `${id}-title` }, h("h3", { id: `${id}-title` }, words.title), words.intro.map((p) => h("p", { class: "hint" }, p)));
}

const EXPORT_TYPES = { ipynb: "application/x-ipynb+json", markdown: "text/markdown" }; // the downloads' media types

/** The Python program and the two exports (downloads of the server's text); every label is the lab's. */
function mountPython(root, words) {
  const code = h("code", { id: "block-python-code" });
  const details = h("details", { class: "disclosure", id: "block-python" }, h("summary", null, words.summary), h("div", { class: "disclosure-body" }, h("p", { class: "note" }, words.note), h("pre", { class: "code", tabindex: "0", "aria-label": words.code_label }, code)));
  details.addEventListener("toggle", () => details.open && blockStudy({ kind: "help", help: "python" }));
  const status = h("span", { id: "block-export-status", class: "hint", role: "status" });
  const exportButton = ({ kind, label, file, done }) => {
    const b = h("button", { type: "button", "data-block-export": kind }, label);
    b.addEventListener("click", async () => {
      try {
        const body = await postJSON(`/api/block/export/${kind}`, getBlock().request, { text: true });
        download(body, EXPORT_TYPES[kind], file);
        text(status, done);
      } catch (error) {
        text(status, error instanceof ApiError ? error.messages.join(" ") : words.unreachable); // refused, or unreachable
      }
    });
    return b;
  };
  root.append(details, h("p", { class: "controls" }, words.exports.map(exportButton), status));
  subscribeBlock((block) => block.answer && text(code, block.answer.python));
}

const LOAD_MARGIN = "1000px 0px";

/** Run `go` once, when `el` comes within LOAD_MARGIN of the viewport or gets focus. */
function whenNear(el, go) {
  let started = false;
  let observer = null;
  const once = () => {
    if (started) return;
    started = true;
    if (observer) observer.disconnect();
    el.removeEventListener("focusin", once);
    go();
  };
  el.addEventListener("focusin", once);
  if (!("IntersectionObserver" in window)) return once();
  observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && once(), { rootMargin: LOAD_MARGIN });
  observer.observe(el);
}

/**
 * Load the section's data; once the first walk is in, build its parts from the lab's words
 * (answer.words: every heading, label and hint) and show it. If the server cannot be reached
 * before that, the section stays hidden: it has no words of its own (the page's banner says so).
 */
async function load(root, summary) {
  const building = firstAnswer().then(() => {
    const words = getBlock().answer.words;
    const offline = h("p", { class: "banner offline", id: "block-offline", role: "alert", hidden: true });
    const parts = {};
    for (const key of ["heads", "walk", "norm", "rope", "edit", "play", "practice", "python"]) {
      parts[key] = part(`block-${key}-part`, words.parts[key]);
    }
    fill(root, offline, Object.values(parts));
    mountSwitches(parts.heads, words.switches);
    mountHeads(parts.heads, words.heads);
    mountWalk(parts.walk, words.walk);
    mountNormCompare(parts.norm, words.norm_compare);
    mountRope(parts.rope, words.rope);
    mountEditor(parts.edit, words.edit);
    mountPlayback(parts.play, words.play);
    mountBlockPractice(parts.practice);
    mountPython(parts.python, words.python);
    subscribeBlock((block) => {
      offline.hidden = !block.offline;
      text(offline, block.offline ? words.offline : "");
      if (block.answer) text(summary, block.answer.summary.text);
    });
    redrawBlock(); // the parts draw the walk that is already in
    root.hidden = false;
  });
  root.hidden = true;
  await startBlock();
  await building;
}

whenNear(byId("block"), () => load(byId("block-root"), byId("block-summary")));
