// One token's journey (bbycroft's, in 2-D): per block, the residual stream's
// norm, what attention and the MLP add, the norms' statistics and the MLP's
// strongest units, as small bar plots. Every bar is focusable and says its
// number on hover (title) and focus (aria-label and the readout line). The
// table shows the server's rounded strings; each says its full-precision
// number on hover (title) and keyboard focus (aria-label).
// Numbers: GET /api/models/jobs/{id}/journey/{index}.
import { byId, fill, h, s, text } from "../shared/dom.js";
import { setupHow } from "./how.js";
import { keptJSON } from "./job.js";

const CLASSES = { resid_in: "is-resid", attn: "is-attn", mlp: "is-mlp", resid_out: "is-resid", norm_1: "is-norm", norm_2: "is-norm" };
const W = 14; // px per block
const H = 60;

/** The number a bar draws: a norm, or a norm's rms. */
function valueOf(b, name) {
  return typeof b[name] === "number" ? b[name] : b[name].rms;
}

/** A small bar plot of one quantity across the blocks; each bar says the server's readout. */
function plot(blocks, { name, words }, readout, label) {
  const top = Math.max(...blocks.map((b) => Math.abs(valueOf(b, name)))) || 1;
  const width = blocks.length * W;
  return h("figure", { class: "rm-journey-fig" },
    s("svg", { class: "rm-journey-plot", viewBox: `0 0 ${width} ${H}`, width, height: H, role: "group",
      "aria-label": label },
    blocks.map((b) => {
      const v = valueOf(b, name);
      const len = (Math.abs(v) / top) * (H - 2);
      const say = b.says[name];
      return s("rect", {
        class: ["rm-bar", CLASSES[name]], x: b.layer * W, y: H - len, width: W - 2, height: Math.max(0.5, len),
        tabindex: "0", "aria-label": say, "data-layer": b.layer, "data-name": name, "data-value": String(v),
        onfocus: () => text(readout, say), onmouseenter: () => text(readout, say),
      }, s("title", {}, say));
    })),
    h("figcaption", {}, words));
}

function draw(box, j) {
  const readout = h("p", { class: "rm-journey-readout", "aria-live": "polite" }, j.readout);
  fill(box,
    h("h3", { id: "rm-journey-title" }, j.title),
    h("p", { class: "hint" }, j.lede.text),
    readout,
    h("div", { class: "rm-journey-plots" }, j.series.map((series) => plot(j.blocks, series, readout, series.label))),
    h("details", { class: "rm-more" },
      h("summary", {}, j.more),
      h("div", { class: "rm-row-scroll", tabindex: "0", role: "region", "aria-label": j.table_label },
        h("table", { class: "rm-row-table" },
          h("thead", {}, h("tr", {}, j.columns.map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, j.blocks.map((b) => h("tr", {},
            h("th", { scope: "row" }, b.layer_display),
            ["norm_1", "norm_2"].map((n) => h("td", { "data-norm": n }, STATS.map((k, i) => [i ? j.joins.stats : "",
              exact(readout, b[n].says[k], b[n].display[k], b[n].precise[k], b[n][k])]))),
            h("td", { "data-mlp": "" }, b.mlp_top.map((u, i) => [i ? j.joins.units : "", h("span", {}, u.unit_display), j.joins.unit,
              exact(readout, u.says, u.value_display, u.value_precise, u.value)])))))))));
}

const STATS = ["mean", "rms", "max_abs"];

/**
 * The server's rounded string; its full-precision string on hover (title) and on
 * hover or keyboard focus in the readout line (aria-live), in the server's words.
 */
function exact(readout, say, display, precise, value) {
  return h("span", { class: "rm-exact", tabindex: "0", title: precise, "data-value": String(value),
    onfocus: () => text(readout, say), onmouseenter: () => text(readout, say) }, display);
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
  let journey = null; // the answer on screen, and its blocks as a picker's options
  // "How is this computed?" for a block's norm, a norm's statistics or an MLP unit of the focused token
  const how = setupHow("journey", () => {
    const at = getAt();
    if (!at || !journey || journey.answer.job !== at.jobId) return null; // nothing of this trace on screen yet
    const { answer, options } = journey;
    return {
      jobId: at.jobId,
      fields: { index: answer.index },
      pickers: { layer: { options, value: null } },
      valueOf(choice, picked) { // the number this view holds for the choice, as the API sent it
        const b = answer.blocks[Number(picked.layer)];
        if (!b) return undefined;
        if (choice === "mlp_unit") return b.mlp_top[Number(picked.rank)]?.value;
        const [name, stat] = choice.split(".");
        return stat ? b[name][stat] : b[name];
      },
    };
  });
  panel.append(how.element);
  return {
    async show() {
      const at = getAt();
      panel.hidden = !at;
      if (!at || shown === `${at.jobId}/${at.index}`) return;
      shown = `${at.jobId}/${at.index}`;
      const mine = ++ticket;
      try {
        const j = await keptJSON(`/api/models/jobs/${encodeURIComponent(at.jobId)}/journey/${at.index}`);
        if (mine !== ticket) return;
        draw(out, j);
        journey = { answer: j, options: j.blocks.map((b) => ({ value: b.layer, label: b.layer_display })) };
        how.refresh();
      } catch (problem) {
        if (mine === ticket) fill(out, h("p", { class: "rm-error" }, problem.message));
      }
    },
  };
}
