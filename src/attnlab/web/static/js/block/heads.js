// The two heads: each head's weight map (who reads whom, in percent, blocked
// cells hatched and labelled), the sentence the server wrote from its numbers,
// an on/off switch with what the output loses without it, and "Open in the
// explorer" for each of its rows, which hands the explorer that head's real
// q, keys and values (the server's ready-made explorer state).

import { fill, h, s, text } from "../shared/dom.js";
import { tensorView } from "./matrix.js";
import { blockStudy, setBlock, subscribeBlock } from "./state.js";
import { loadExample } from "../explorer/example.js";

const CELL = 56;

/** The head's weight map as an SVG grid: rows are queries, columns are keys. */
function weightMap(head, labels) {
  const n = labels.length;
  const size = CELL * (n + 1);
  const svg = s("svg", {
    class: "block-map",
    viewBox: `0 0 ${size} ${size}`,
    role: "img",
    "aria-label": head.map_label,
  });
  labels.forEach((label, i) => {
    svg.append(s("text", { x: CELL * (i + 1.5), y: CELL * 0.6, class: "map-label" }, label));
    svg.append(s("text", { x: CELL * 0.5, y: CELL * (i + 1.6), class: "map-label" }, label));
  });
  head.weights.forEach((row, r) =>
    row.forEach((w, c) => {
      const x = CELL * (c + 1);
      const y = CELL * (r + 1);
      const blocked = !head.allowed[r][c];
      svg.append(
        s("rect", { x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, class: blocked ? "map-cell blocked" : "map-cell" }),
        blocked ? null : s("rect", { x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, class: "map-fill", "fill-opacity": String(w) }),
        s("text", { x: x + CELL / 2, y: y + CELL / 2 + 4, class: blocked ? "map-text muted" : "map-text" }, blocked ? "blocked" : head.display.percent[r][c]),
      );
    }),
  );
  return svg;
}

/** Hand row `i` of `head` to the explorer and take the learner there. */
function openInExplorer(head, i) {
  const ex = structuredClone(head.explorer[i]);
  loadExample(ex); // replaces the explorer's example and redraws
  blockStudy({ kind: "help", help: "explorer" });
  const target = document.getElementById("explorer");
  if (target) {
    target.scrollIntoView({ block: "start" });
    const title = document.getElementById("explorer-title");
    if (title) {
      title.setAttribute("tabindex", "-1");
      title.focus({ preventScroll: true });
    }
  }
}

/** The two head cards; `words` are the lab's (answer.words.heads), the rest is each head's answer. */
export function mountHeads(root, words) {
  const cards = [0, 1].map((index) => {
    const toggle = h("input", { type: "checkbox", id: `block-head-on-${index}`, class: "block-switch" });
    toggle.addEventListener("change", () => {
      const on = toggle.closest(".block-heads").querySelectorAll(".block-switch");
      setBlock({ heads_on: Array.from(on, (b) => b.checked) });
    });
    const title = h("h4", null);
    const sentence = h("p", { class: "block-sentence", "data-sentence": String(index) });
    const map = h("div", { class: "block-map-box" });
    const loses = h("div", { class: "block-loses", "data-ablation": String(index) });
    const open = h("p", { class: "controls block-open" });
    const switchLabel = h("label", { for: `block-head-on-${index}` });
    const card = h(
      "section",
      { class: "block-head", "data-head": String(index) },
      title,
      sentence,
      h("p", { class: "block-switch-row" }, toggle, switchLabel),
      map,
      open,
      loses,
    );
    return { index, toggle, switchLabel, title, sentence, map, loses, open, card };
  });
  root.append(h("div", { class: "block-heads" }, cards.map((c) => c.card)));

  let drawn = null;
  subscribeBlock((block) => {
    const answer = block.answer;
    if (!answer || drawn === answer) return;
    drawn = answer;
    const labels = answer.inputs.labels;
    for (const c of cards) {
      const head = answer.heads[c.index];
      text(c.title, head.title);
      c.card.setAttribute("aria-label", head.name);
      text(c.switchLabel, head.switch_label);
      text(c.sentence, head.sentence.text);
      c.toggle.checked = head.on;
      fill(c.map, weightMap(head, labels));
      fill(
        c.open,
        h("span", { class: "hint" }, words.open),
        labels.map((label, i) =>
          h("button", { type: "button", "data-open": `${c.index}-${i}`, onclick: () => openInExplorer(head, i) }, head.open_labels[i]),
        ),
      );
      const ab = answer.ablation.find((a) => a.head === c.index);
      if (!ab) {
        fill(c.loses);
        continue;
      }
      fill(c.loses, h("p", null, ab.sentence.text), tensorView(ab.table, { idPrefix: "loses" }));
    }
  });
}
