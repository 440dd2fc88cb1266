// Boot the section "From one head to a transformer block": build its parts
// once, then each redraws from the block state (state.js) on every
// answer. Every number comes from POST /api/block; nothing is computed here.
// Its data (~75 KB) loads only when the section is about to be seen (within
// LOAD_MARGIN of the viewport) or something in it gets focus: the page's first
// load does not pay for a section far below the explorer.

import { byId, fill, h, text } from "../shared/dom.js";
import { errorText, request } from "../shared/http.js";
import { mountWalk } from "./walk.js";
import { mountNormCompare, mountSwitches } from "./norm.js";
import { mountHeads } from "./heads.js";
import { mountRope } from "./rope.js";
import { mountEditor } from "./edit.js";
import { mountPlayback } from "./play.js";
import { mountBlockPractice } from "./practice.js";
import { blockStudy, getBlock, startBlock, subscribeBlock } from "./state.js";

function part(id, title, ...intro) {
  const el = h("section", { class: "nb-panel block-part", id, "aria-labelledby": `${id}-title` }, h("h3", { id: `${id}-title` }, title), intro.map((p) => h("p", { class: "hint" }, p)));
  return el;
}

const EXPORT_TYPES = { ipynb: "application/x-ipynb+json", markdown: "text/markdown" };

/** The Python program and the two exports (downloads of the server's text). */
function mountPython(root) {
  const code = h("code", { id: "block-python-code" });
  const details = h("details", { class: "disclosure", id: "block-python" }, h("summary", null, "Read the whole block in Python"), h("div", { class: "disclosure-body" }, h("p", { class: "note" }, "NumPy-free Python with ordered sums: it prints the numbers of this walk bit for bit."), h("pre", { class: "code", tabindex: "0", "aria-label": "Generated Python program for the block" }, code)));
  details.addEventListener("toggle", () => details.open && blockStudy({ kind: "help", help: "python" }));
  const status = h("span", { id: "block-export-status", class: "hint", role: "status" });
  const exportButton = (kind, label, file) => {
    const b = h("button", { type: "button", "data-block-export": kind }, label);
    b.addEventListener("click", async () => {
      try {
        const answer = await request(`/api/block/export/${kind}`, { method: "POST", body: getBlock().request, text: true });
        if (!answer.ok) return text(status, errorText(answer));
        const url = URL.createObjectURL(new Blob([answer.body], { type: EXPORT_TYPES[kind] }));
        const a = h("a", { href: url, download: file });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
        text(status, `Downloaded ${file}.`);
      } catch {
        text(status, "The lab server cannot be reached; nothing was exported.");
      }
    });
    return b;
  };
  root.append(details, h("p", { class: "controls" }, exportButton("ipynb", "Export the block as a Jupyter notebook", "attnlab-block.ipynb"), exportButton("markdown", "Export the block as Markdown", "attnlab-block.md"), status));
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

/** Build the section's parts and load its data (once, when it is about to be seen). */
async function load(root, summary) {
  const offline = h("p", { class: "banner offline", id: "block-offline", role: "alert", hidden: true });
  const heads = part("block-heads-part", "Two heads, side by side", "Each head is one single-head attention on its own q, k and v. Switch a head off to see what the output loses.");
  const walk = part("block-walk-part", "The walk, every number shown", "Focus or hover a number of a product to see its ordered sum. Arrow keys move between the numbers of a table.");
  const norm = part("block-norm-part", "Pre-norm or post-norm, side by side");
  const rope = part("block-rope-part", "Positions: RoPE is a rotation in the plane");
  const edit = part("block-edit-part", "Edit the weights");
  const play = part("block-play-part", "Watch the block");
  const practice = part("block-practice-part", "Practice: the block");
  const python = part("block-python-part", "The same block in Python, and export");
  // Hidden until the first walk is in: no half-drawn part (an unlabelled plane) meanwhile.
  root.hidden = true;
  fill(root, offline, heads, walk, norm, rope, edit, play, practice, python);
  mountSwitches(heads);
  mountHeads(heads);
  mountWalk(walk);
  mountNormCompare(norm);
  mountRope(rope);
  mountPlayback(play);
  mountBlockPractice(practice);
  mountPython(python);
  subscribeBlock((block) => {
    offline.hidden = !block.offline;
    text(offline, block.offline ? "The lab server cannot be reached; the block keeps its last numbers." : "");
    if (block.answer) text(summary, block.answer.summary.text);
    if (block.answer || block.offline) root.hidden = false;
  });
  await startBlock();
  if (getBlock().example) mountEditor(edit);
}

whenNear(byId("block"), () => load(byId("block-root"), byId("block-summary")));
