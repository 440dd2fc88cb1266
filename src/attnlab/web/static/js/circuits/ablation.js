// Ablation: switch heads off (zero or mean) and see each position's next-token probability and
// loss before and after, the biggest changes named (a decoder), or how the vectors leaving a
// layer moved (the encoder). Below it, "Which heads matter here": the logit of the top token at a
// position split into the embedding's, each head's and each MLP's terms. Both are jobs of the
// model worker (run.js); every string is the server's.
import { byId, fill, h } from "../shared/dom.js";
import { ApiError } from "../shared/http.js";
import { drawGrid } from "./grid.js";
import { runJob } from "./run.js";
import { chips, said, showError, table } from "./place.js";

/** The elements of one job's controls: its button, progress bar, status line, error line and output. */
export function panel(prefix) {
  return {
    run: byId(`ci-${prefix}-run`), progress: byId(`ci-${prefix}-progress`), status: byId(`ci-${prefix}-status`),
    error: byId(`ci-${prefix}-error`), out: byId(`ci-${prefix}-out`),
  };
}

/**
 * Run `url` with `body()` from `els.run`, drawing the result with `draw` (a refusal shown at its field).
 * @param {ReturnType<typeof panel>} els
 * @param {{words: () => object}} page
 * @param {Record<string, HTMLElement>} fields the controls by the API's field name (marked invalid on a refusal)
 */
export function wire(els, page, url, body, draw, fields = {}) {
  els.run.addEventListener("click", async () => {
    els.run.disabled = true;
    showError(els.error, "");
    for (const f of Object.values(fields)) f.setAttribute("aria-invalid", "false");
    try {
      const job = await runJob(url, body(), { progress: els.progress, status: els.status, words: page.words });
      if (job.status === "error") showError(els.error, job.message, fields[job.field] ?? null);
      else if (job.result) draw(job.result);
    } catch (error) {
      const field = error instanceof ApiError ? fields[error.fields[0]?.field] : null;
      showError(els.error, error.message, field ?? null);
    } finally {
      els.run.disabled = false;
    }
  });
}

function drawAblation(out, v) {
  if (v.kind === "next_token") {
    const rows = v.positions.map((p) => ({
      title: p.title ?? null,
      cells: [p.label, p.next?.label ?? "", p.p_before_display ?? "", p.p_after_display ?? "",
        p.loss_before_display ?? "", p.loss_after_display ?? "", chips(p.top_before), chips(p.top_after)],
      nums: [2, 3, 4, 5],
    }));
    fill(out, said(v.lede), said(v.mean_loss), h("ul", {}, v.biggest.map((b) => h("li", {}, b.text))),
      table([...v.columns, ...v.top_columns], rows, v.heads_label));
  } else {
    const rows = v.positions.map((p) => ({
      title: p.title, cells: [p.label, p.norm_display, p.change_display, p.relative_display, p.cosine_display],
      nums: [1, 2, 3, 4],
    }));
    fill(out, said(v.lede), said(v.pooled), said(v.note ?? null), h("ul", {}, v.biggest.map((b) => h("li", {}, b.text))),
      table(v.columns, rows, v.heads_label));
  }
  out.dataset.drawn = v.heads_label;
}

function drawAttribution(out, v) {
  const map = h("div", { class: "ci-map" });
  fill(out, h("h4", {}, v.title), said(v.norm), said(v.exact), said(v.sums), said(v.top_words),
    h("div", { class: "ci-grid-box" }, map, chips(v.top.map((t) => ({ label: t.name, display: t.display, title: t.title })))));
  drawGrid(map, v.map, { name: "attribution" });
  out.dataset.drawn = String(v.position);
}

/**
 * @param {{model: () => string, text: () => string, words: () => object, decoder: () => boolean}} page
 */
export function setupAblation(page) {
  const heads = byId("ci-heads");
  const how = byId("ci-how");
  const layer = byId("ci-ablation-layer");
  const els = panel("ablation");
  wire(els, page, "/api/circuits/ablation", () => ({
    model: page.model(), text: page.text(), heads: heads.value, how: how.value,
    layer: page.decoder() ? null : Number(layer.value),
  }), (v) => drawAblation(els.out, v), { heads, text: byId("ci-text"), layer });
  const dla = panel("dla");
  const position = byId("ci-dla-position");
  wire(dla, page, "/api/circuits/attribution", () => ({
    model: page.model(), text: page.text(), position: Number(position.value),
  }), (v) => drawAttribution(dla.out, v), { position, text: byId("ci-text") });
}
