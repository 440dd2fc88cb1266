// One token's journey (bbycroft's, in 2-D): per block, the residual stream's
// norm, what attention and the MLP add, the norms' statistics and the MLP's
// strongest units, as small bar plots. Every bar is focusable and says its
// number on hover (title) and focus (aria-label and the readout line). The
// table shows the server's rounded strings; each says its full-precision
// number on hover (title) and keyboard focus (aria-label).
// Numbers: GET /api/models/jobs/{id}/journey/{index}.
import { byId, fill, h, s, text } from "../shared/dom.js";
import { getJson } from "./api.js";

const SERIES = [
  ["resid_in", "residual in", "is-resid"],
  ["attn", "attention adds", "is-attn"],
  ["mlp", "MLP adds", "is-mlp"],
  ["resid_out", "residual out", "is-resid"],
];
const W = 14; // px per block
const H = 60;

/** A small bar plot of one quantity across the blocks. */
function plot(blocks, name, words, cls, readout, value, shown = (b) => b.display[name]) {
  const top = Math.max(...blocks.map(value).map(Math.abs)) || 1;
  const width = blocks.length * W;
  return h("figure", { class: "rm-journey-fig" },
    s("svg", { class: "rm-journey-plot", viewBox: `0 0 ${width} ${H}`, width, height: H, role: "group",
      "aria-label": `${words}, block by block` },
    blocks.map((b) => {
      const v = value(b);
      const len = (Math.abs(v) / top) * (H - 2);
      const say = `block ${b.layer}: ${words} ${shown(b)}`;
      return s("rect", {
        class: ["rm-bar", cls], x: b.layer * W, y: H - len, width: W - 2, height: Math.max(0.5, len),
        tabindex: "0", "aria-label": say, "data-layer": b.layer, "data-name": name, "data-value": String(v),
        onfocus: () => text(readout, say), onmouseenter: () => text(readout, say),
      }, s("title", {}, say));
    })),
    h("figcaption", {}, words));
}

function draw(box, j) {
  const readout = h("p", { class: "rm-journey-readout", "aria-live": "polite" }, "Hover or focus a bar for its number.");
  const norms = [["norm_1", "first norm"], ["norm_2", "second norm"]];
  fill(box,
    h("h3", { id: "rm-journey-title" }, `Token ${j.label} through ${j.blocks.length} blocks`),
    h("p", { class: "hint" }, `Lengths (L2 norms) of this token's vectors. The model uses ${j.norm} norm, placed ${j.placement === "pre" ? "before" : "after"} each sublayer.`),
    readout,
    h("div", { class: "rm-journey-plots" },
      SERIES.map(([name, words, cls]) => plot(j.blocks, name, words, cls, readout, (b) => b[name])),
      norms.map(([name, words]) => plot(j.blocks, name, `${words}: rms of its input`, "is-norm", readout, (b) => b[name].rms,
        (b) => b[name].display.rms))),
    h("details", { class: "rm-more" },
      h("summary", {}, "Every block's norm statistics and strongest MLP units"),
      h("div", { class: "rm-row-scroll", tabindex: "0", role: "region", "aria-label": "Block by block" },
        h("table", { class: "rm-row-table" },
          h("thead", {}, h("tr", {}, ["block", "first norm: mean / rms / max |x|", "second norm: mean / rms / max |x|", "strongest MLP units (unit: value)"]
            .map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, j.blocks.map((b) => h("tr", {},
            h("th", { scope: "row" }, String(b.layer)),
            norms.map(([n, words]) => h("td", { "data-norm": n }, STATS.map((k, i) => [i ? " / " : "",
              exact(readout, `block ${b.layer}: ${words} ${k.replace("_", " ")}`, b[n].display[k], b[n][k])]))),
            h("td", { "data-mlp": "" }, b.mlp_top.map((u, i) => [i ? ", " : "", `${u.unit}: `,
              exact(readout, `block ${b.layer}: MLP unit ${u.unit}`, u.value_display, u.value)])))))))));
}

const STATS = ["mean", "rms", "max_abs"];

/**
 * The server's rounded string; its full-precision number on hover (title) and on
 * hover or keyboard focus in the readout line (aria-live).
 */
function exact(readout, what, display, value) {
  const say = () => text(readout, `${what} = ${display} (exactly ${value})`);
  return h("span", { class: "rm-exact", tabindex: "0", title: String(value), "data-value": String(value),
    onfocus: say, onmouseenter: say }, display);
}

/**
 * Wire the journey panel; `getAt()` gives {jobId, index} of the focused token or null.
 * @returns {{show: () => void}}
 */
export function setupJourney(getAt) {
  const panel = byId("rm-journey");
  const out = byId("rm-journey-out");
  let shown = "";
  let ticket = 0;
  return {
    async show() {
      const at = getAt();
      panel.hidden = !at;
      if (!at || shown === `${at.jobId}/${at.index}`) return;
      shown = `${at.jobId}/${at.index}`;
      const mine = ++ticket;
      try {
        const j = await getJson(`/api/models/jobs/${encodeURIComponent(at.jobId)}/journey/${at.index}`);
        if (mine === ticket) draw(out, j);
      } catch (problem) {
        if (mine === ticket) fill(out, h("p", { class: "rm-error" }, problem.message));
      }
    },
  };
}
