// The bridge to real models: "Open this head in the explorer" shows the
// focused query's real row in the explorer's terms, with the explorer's own
// drawing modules (imported, not copied): the score table and the shares
// strip of explorer/share.js, the plane helpers and label placement of
// shared/plot.js. q and every key at full precision sit in disclosures; the plane is the server's
// projection onto the plane of q and its top key, labelled as one. Every word
// is the server's (the answer's, or the view's words: GET /api/models), and each
// key says its token's exact text on hover.
// Numbers and strings: GET /api/models/jobs/{id}/bridge/{layer}/{head}/{query}.
import { byId, fill, h, s, srcClass } from "../shared/dom.js";
import { arrow, grid, label, placeLabels, plane, SIZE } from "../shared/plot.js";
import { drawScoreTable, drawStrip } from "../explorer/share.js";
import { keptJSON } from "./job.js";
import { fillIn } from "./words.js";

/** q and every key, each coordinate at full precision, behind disclosures. */
function vectors(n) {
  const d = n.display;
  return h("div", { class: "rm-bridge-vectors" },
    h("details", { class: "rm-bridge-more", "data-part": "q" },
      h("summary", {}, n.text.q_summary),
      h("p", { class: "rm-precise", "data-field": "q-precise" }, d.q_precise)),
    h("details", { class: "rm-bridge-more", "data-part": "keys" },
      h("summary", {}, n.text.keys_summary),
      h("ol", { class: "rm-bridge-keys", start: 0 }, d.sources.map((src) => h("li", { "data-index": src.index },
        h("details", {},
          h("summary", { title: src.exact }, src.summary),
          h("p", { class: "rm-precise", "data-field": `key-precise-${src.index}` }, src.key_precise)))))));
}

/** The plane of q and its top key: every key a point, the top few labelled, q an arrow. */
function planeFigure(n) {
  const pl = n.plane;
  const svg = s("svg", { class: "plane rm-bridge-plane", viewBox: `0 0 ${SIZE} ${SIZE}`, role: "img",
    "aria-labelledby": "rm-bridge-plane-cap" });
  const figure = h("figure", { class: "rm-bridge-fig" }, svg,
    h("figcaption", { id: "rm-bridge-plane-cap" },
      h("strong", {}, pl.heading), " ", pl.caption.text, " ", pl.exact.text, " ",
      h("span", { "data-field": "leaves-out" }, pl.leaves_out.text), " ",
      h("span", { "data-field": "labels-note" }, pl.labels_note.text)));
  if (!pl.view) {
    fill(svg, s("text", { class: "label", x: 10, y: 30 }, n.text.no_plane));
    return figure;
  }
  const p = plane(pl.view);
  const parts = [grid(p)];
  const labels = [];
  const top = pl.keys.find((k) => k.index === pl.top_key);
  if (top) parts.push(arrow(p, [0, 0], [top.x, top.y], "ink", {}, 7));
  for (const k of pl.keys) {
    const cls = k.labelled ? srcClass(k.index) : "";
    parts.push(s("circle", { class: ["dot rm-bridge-key", cls, k.labelled && "is-labelled"], cx: p.x(k.x), cy: p.y(k.y),
      r: k.labelled ? 4 : 2.5, "data-index": k.index, "data-x": String(k.x), "data-y": String(k.y) },
    s("title", {}, k.title)));
    // a labelled key says its token's exact text on hover (a group's title: the label's text stays its own)
    if (k.labelled) labels.push(s("g", { class: "rm-bridge-label" }, s("title", {}, k.exact),
      label(p, [k.x, k.y], k.label, `${cls}-text`)));
  }
  parts.push(arrow(p, [0, 0], pl.q, "amber", {}, 11));
  labels.unshift(label(p, pl.q, pl.q_display, "amber-text", 10, -14));
  fill(svg, ...parts, ...labels);
  return figure;
}

/** Match, Share and Mix, as the explorer's three steps. */
function steps(n) {
  const table = h("table", { class: "score-table rm-bridge-table" });
  const strip = s("svg", { class: "strip rm-bridge-strip", role: "img",
    "aria-label": n.text.strip_label });
  const result = { trace: n.trace, display: n.display, geometry: n.geometry, compare: { active: false } };
  const section = h("div", { class: "rm-bridge-steps" },
    h("section", { class: "rm-bridge-step", "aria-labelledby": "rm-bridge-match" },
      h("h4", { id: "rm-bridge-match" }, n.text.match),
      h("p", { "data-words": "match" }, n.words.match.text),
      h("div", { class: "rm-bridge-scroll", tabindex: "0", role: "region", "aria-label": n.text.table_region },
        table)),
    h("section", { class: "rm-bridge-step", "aria-labelledby": "rm-bridge-share" },
      h("h4", { id: "rm-bridge-share" }, n.text.share),
      h("p", { "data-words": "share" }, n.words.share.text),
      strip,
      h("p", { class: "rm-precise", "data-field": "m-z" }, n.display.m_z_precise)),
    h("section", { class: "rm-bridge-step", "aria-labelledby": "rm-bridge-mix" },
      h("h4", { id: "rm-bridge-mix" }, n.text.mix),
      h("p", { "data-words": "mix" }, n.words.mix.text),
      h("details", { class: "rm-bridge-more", "data-part": "output" },
        h("summary", {}, n.text.output_summary),
        h("p", { class: "rm-precise", "data-field": "output-precise" }, n.display.output_precise))));
  return { section, draw: () => { drawScoreTable(table, result); drawStrip(strip, result); } };
}

function draw(box, n) {
  const three = steps(n);
  fill(box,
    h("h3", { id: "rm-bridge-title", tabindex: "-1" }, n.title),
    h("p", { class: "hint" }, n.lede.text),
    h("p", { class: "rm-bridge-summary", "data-words": "summary" }, n.words.summary.text),
    vectors(n),
    h("div", { class: "rm-bridge-body" }, three.section, planeFigure(n)));
  three.draw();
  const svg = box.querySelector("svg.rm-bridge-plane");
  if (svg && svg.viewBox.baseVal.width) placeLabels(svg);
}

/**
 * Wire the bridge; `getAt()` gives {jobId, layer, head, query, label} or null (no focused query);
 * `words()` the view's words (GET /api/models' words: bridge_at, bridge_none, bridge_empty).
 * @returns {{show: () => void}} call when the focused query, layer or head changes
 */
export function setupBridge(getAt, words) {
  const open = byId("rm-bridge-open");
  const note = byId("rm-bridge-note");
  const panel = byId("rm-bridge");
  const out = byId("rm-bridge-out");
  let ticket = 0;

  async function load(focus) {
    const at = getAt();
    if (!at) return;
    const mine = ++ticket;
    const where = [at.layer, at.head, at.query].map(encodeURIComponent).join("/");
    try {
      const n = await keptJSON(`/api/models/jobs/${encodeURIComponent(at.jobId)}/bridge/${where}`);
      if (mine !== ticket) return;
      draw(out, n);
      // take the focus only if the learner has not moved it meanwhile (a slow answer must not steal it)
      const still = document.activeElement === open || document.activeElement === document.body;
      if (focus && still) byId("rm-bridge-title").focus({ preventScroll: false });
    } catch (problem) {
      if (mine === ticket) fill(out, h("p", { class: "rm-error" }, problem.message));
    }
  }

  open.addEventListener("click", () => {
    if (!getAt()) return;
    panel.hidden = false;
    load(true);
  });

  return {
    show() {
      const at = getAt();
      open.disabled = !at;
      const w = words();
      fill(note, at ? fillIn(w.bridge_at, { query: at.label, layer: at.layer, head: at.head }) : w.bridge_none);
      // an open bridge follows the focused query, layer and head; a new trace (no query yet) empties it
      if (at && !panel.hidden) load(false);
      if (!at && !panel.hidden) {
        ticket += 1; // an answer still on its way is for the old text
        fill(out, h("p", { class: "rm-bridge-empty" }, w.bridge_empty));
      }
    },
  };
}
