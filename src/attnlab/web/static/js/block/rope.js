// RoPE drawn as a rotation in the plane: a head's q and k for one token before
// (dashed) and after (solid) the rotation by the token's position, with the
// angle's arc; and the server's demonstration that the score of a rotated q
// and k depends only on their offset. Every vector and score is the
// server's; this module only maps them to the picture.

import { fill, h, s, text } from "../shared/dom.js";
import { subscribeBlock } from "./state.js";
import { placeLabels } from "../shared/plot.js";

const SIZE = 300;
const PAD = 24;

function view(vectors) {
  let r = 1;
  for (const v of vectors) r = Math.max(r, Math.abs(v[0]), Math.abs(v[1]));
  const unit = (SIZE / 2 - PAD) / (r * 1.25);
  return (v) => [SIZE / 2 + v[0] * unit, SIZE / 2 - v[1] * unit];
}

/**
 * An arrow from the origin to `to`; its label starts outside the tip, q's above and k's below.
 * Tips may coincide (position 0 rotates by 0; q may equal k): shared/plot.js's placeLabels() then
 * moves labels off each other, with a leader back to the tip (data-ax, data-ay).
 */
function arrow(to, px, cls, label, below) {
  const [x0, y0] = px([0, 0]);
  const [x1, y1] = px(to);
  const right = x1 >= x0;
  return s(
    "g",
    { class: cls },
    s("line", { x1: x0, y1: y0, x2: x1, y2: y1 }),
    s("circle", { cx: x1, cy: y1, r: below ? 4 : 6 }),
    s("text", { x: x1 + (right ? -4 : 4), y: y1 + (below ? 18 : -10), class: "label", "text-anchor": right ? "end" : "start",
      "data-ax": x1, "data-ay": y1 }, label),
  );
}

/** The arc from v's direction to w's, on a small circle (the rotation's angle). */
function arc(v, w, px, radius, cls) {
  const a0 = Math.atan2(v[1], v[0]);
  const a1 = Math.atan2(w[1], w[0]);
  const [cx, cy] = px([0, 0]);
  const p0 = [cx + radius * Math.cos(a0), cy - radius * Math.sin(a0)];
  const p1 = [cx + radius * Math.cos(a1), cy - radius * Math.sin(a1)];
  let sweep = a1 - a0;
  while (sweep < 0) sweep += 2 * Math.PI;
  const large = sweep > Math.PI ? 1 : 0;
  return s("path", { class: `rope-arc ${cls}`, d: `M ${p0[0]} ${p0[1]} A ${radius} ${radius} 0 ${large} 0 ${p1[0]} ${p1[1]}` });
}

/** The RoPE part; `words` are the lab's (answer.words.rope): the pickers' labels and the arrows' names. */
export function mountRope(root, words) {
  const pick = h("select", { id: "block-rope-token" });
  const headPick = h("select", { id: "block-rope-head" });
  const status = h("p", { id: "block-rope-status", class: "block-caption" });
  const svg = s("svg", { id: "block-rope-plane", class: "block-rope-plane", viewBox: `0 0 ${SIZE} ${SIZE}`, role: "img", "aria-labelledby": "block-rope-note" });
  const note = h("p", { id: "block-rope-note", class: "hint" });
  const sentence = h("p", { id: "block-rope-sentence", class: "block-sentence" });
  const table = h("table", { id: "block-rope-pairs", class: "block-matrix" });
  root.append(
    status,
    h("p", { class: "controls" }, h("span", { class: "field" }, h("label", { for: "block-rope-head" }, words.head), headPick), h("span", { class: "field" }, h("label", { for: "block-rope-token" }, words.token), pick)),
    h("figure", { class: "block-rope-figure" }, svg, h("figcaption", null, note)),
    sentence,
    h("div", { class: "matrix-scroll" }, table),
  );
  let last = null;
  // Labels are placed once the plane is laid out (text boxes have sizes): now, or on the
  // next frame when the section is still hidden while its first walk arrives.
  let placing = 0;
  const place = () => {
    cancelAnimationFrame(placing);
    if (svg.getBBox().width > 0) placeLabels(svg);
    else placing = requestAnimationFrame(() => svg.getBBox().width > 0 && placeLabels(svg));
  };
  const draw = () => {
    if (!last) return;
    const rope = last.rope;
    // First fill: open on the head and token the server picks (one whose q and k turn), not token 0,
    // which sits at position 0 and turns by nothing.
    if (headPick.options.length !== rope.heads.length) {
      fill(headPick, rope.heads.map((name, i) => h("option", { value: String(i) }, name)));
      headPick.value = String(rope.shown.head);
    }
    if (pick.options.length !== rope.rotations[0].length) {
      fill(pick, rope.rotations[0].map((r, i) => h("option", { value: String(i) }, r.option)));
      pick.value = String(rope.shown.token);
    }
    const r = rope.rotations[Number(headPick.value)][Number(pick.value)];
    text(status, rope.status.text);
    const px = view([r.q, r.q_rotated, r.k, r.k_rotated]);
    const [cx, cy] = px([0, 0]);
    fill(
      svg,
      s("line", { x1: PAD, y1: cy, x2: SIZE - PAD, y2: cy, class: "axis" }),
      s("line", { x1: cx, y1: PAD, x2: cx, y2: SIZE - PAD, class: "axis" }),
      arc(r.q, r.q_rotated, px, 28, "amber"),
      arc(r.k, r.k_rotated, px, 40, "ink"),
      arrow(r.k, px, "rope-vec ink before", words.vectors.k, true),
      arrow(r.k_rotated, px, "rope-vec ink", words.vectors.k_rotated, true),
      arrow(r.q, px, "rope-vec amber before", words.vectors.q, false),
      arrow(r.q_rotated, px, "rope-vec amber", words.vectors.q_rotated, false),
    );
    place();
    text(note, r.note.text);
    const demo = rope.demo;
    text(sentence, demo.sentence.text);
    fill(
      table,
      h("caption", null, demo.caption),
      h("thead", null, h("tr", null, demo.columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, demo.pairs.map((p) => h("tr", { "data-offset": String(p.offset) }, h("td", null, String(p.query_position)), h("td", null, String(p.key_position)), h("td", null, String(p.offset)), h("td", { class: "num" }, p.display)))),
    );
  };
  pick.addEventListener("change", draw);
  headPick.addEventListener("change", draw);
  subscribeBlock((block) => {
    if (!block.answer || block.answer === last) return;
    last = block.answer;
    draw();
  });
}
