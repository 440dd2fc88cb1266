// Ablation: switch heads off (zero or mean) and see each position's next-token probability and
// loss before and after, the biggest changes named (a decoder), or how the vectors leaving a
// layer moved (the encoder). Below it, "Which heads matter here": the logit of the top token at a
// position split into the embedding's, each head's and each MLP's terms. Both are jobs of the
// model worker (run.js); every string is the server's. Each number a view draws has "How is this
// computed?" (numbers.js).
import { byId, fill, h } from "../shared/dom.js";
import { ApiError } from "../shared/http.js";
import { drawGrid } from "./grid.js";
import { setupNumbers } from "./numbers.js";
import { runJob } from "./run.js";
import { chips, markNumber, said, showError, table } from "./place.js";

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
        p.loss_before_display ?? "", p.loss_after_display ?? "",
        chips(p.top_before, "", "p"), chips(p.top_after, "", "p")],
      nums: [2, 3, 4, 5],
      hows: { 2: [p.how?.p_before, p.p_before], 3: [p.how?.p_after, p.p_after],
        4: [p.how?.loss_before, p.loss_before], 5: [p.how?.loss_after, p.loss_after] },
    }));
    fill(out, said(v.lede), said(v.mean_loss), h("ul", {}, v.biggest.map((b) => h("li", {}, b.text))),
      table([...v.columns, ...v.top_columns], rows, v.heads_label));
  } else {
    const rows = v.positions.map((p) => ({
      title: p.title, cells: [p.label, p.norm_display, p.change_display, p.relative_display, p.cosine_display],
      nums: [1, 2, 3, 4],
      hows: { 1: [p.how?.norm_before, p.norm_before], 2: [p.how?.change, p.change], 4: [p.how?.cosine, p.cosine] },
    }));
    // the pooled sentence states one number, the embedding's cosine: the sentence is that number
    const pooled = v.pooled && markNumber(said(v.pooled), v.pooled_how, v.pooled.claims.cosine);
    fill(out, said(v.lede), pooled, said(v.note ?? null), h("ul", {}, v.biggest.map((b) => h("li", {}, b.text))),
      table(v.columns, rows, v.heads_label));
  }
  out.dataset.drawn = v.heads_label;
}

function drawAttribution(out, v) {
  const map = h("div", { class: "ci-map" });
  const top = v.top.map((t) => ({ label: t.name, display: t.display, title: t.title, how: t.how, value: t.value }));
  fill(out, h("h4", {}, v.title), said(v.norm),
    said(v.exact, "", [{ display: v.logit_precise, how: v.how?.logit, value: v.logit }]),
    said(v.sums, "", [{ display: v.embedding.display, how: v.embedding.how, value: v.embedding.value }]),
    said(v.top_words),
    h("div", { class: "ci-grid-box" }, map, chips(top, "", "value")));
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
  const numbers = setupNumbers(els.out, "ablation", page);
  wire(els, page, "/api/circuits/ablation", () => ({
    model: page.model(), text: page.text(), heads: heads.value, how: how.value,
    layer: page.decoder() ? null : Number(layer.value),
  }), (v) => {
    drawAblation(els.out, v);
    numbers.drawn({ source: v.program_source });
  }, { heads, text: byId("ci-text"), layer });
  const dla = panel("dla");
  const dlaNumbers = setupNumbers(dla.out, "attribution", page);
  const position = byId("ci-dla-position");
  wire(dla, page, "/api/circuits/attribution", () => ({
    model: page.model(), text: page.text(), position: Number(position.value),
  }), (v) => {
    drawAttribution(dla.out, v);
    dlaNumbers.drawn({ source: v.program_source });
  }, { position, text: byId("ci-text") });
}
