// Activation patching: two prompts of one token length, two answer tokens (a decoder), and a
// sweep (the residual stream at each layer × token, each query head's output, or each MLP's)
// run by the model worker, its progress followed and Cancel offered while it runs. A cancelled
// sweep comes back with what it had done: its cells not computed are drawn blank. Every number
// and word is the server's (the map's hover gives each metric at full precision). drawPatching only
// draws an answer: the PatchView notebook widget (widgets/circuits.js) draws the kernel's with it.
import { byId, fill, h } from "../shared/dom.js";
import { ApiError } from "../shared/http.js";
import { drawGrid } from "./grid.js";
import { setupNumbers } from "./numbers.js";
import { cancelJob, runJob } from "./run.js";
import { said, showError } from "./place.js";
import { panel } from "./ablation.js";

/** Draw a patching answer (models/circuitviews/patching.patching_view), partial or whole, into `out`. */
export function drawPatching(out, v) {
  const map = h("div", { class: "ci-map" });
  const values = [{ display: v.pair.clean_display, how: v.pair.how?.clean, value: v.pair.clean_value },
    { display: v.pair.corrupt_display, how: v.pair.how?.corrupt, value: v.pair.corrupt_value }];
  fill(out, said(v.meaning), said(v.pair.values, "", values), said(v.pair.recovered), said(v.pair.differ_words),
    said(v.sweep.status, "ci-sweep-status"), said(v.sweep.top), said(v.sweep.skipped), map);
  drawGrid(map, v.sweep.map, { name: "patching" });
  out.dataset.done = String(v.sweep.done);
  out.dataset.total = String(v.sweep.total);
  out.dataset.cancelled = String(v.sweep.cancelled);
}

/**
 * @param {{model: () => string, words: () => object, decoder: () => boolean}} page
 */
export function setupPatching(page) {
  const els = panel("patch");
  const numbers = setupNumbers(els.out, "patching", page);
  const cancel = byId("ci-patch-cancel");
  const fields = {
    clean: byId("ci-clean"), corrupt: byId("ci-corrupt"), right: byId("ci-right"), other: byId("ci-other"),
    sweep: byId("ci-sweep"), site: byId("ci-site"), first_layer: byId("ci-first-layer"), last_layer: byId("ci-last-layer"),
  };
  let running = null; // the id of the sweep under way

  cancel.addEventListener("click", async () => {
    if (!running) return;
    cancel.disabled = true;
    try {
      await cancelJob(running);
    } catch (error) {
      showError(els.error, error.message);
    }
  });

  els.run.addEventListener("click", async () => {
    els.run.disabled = true;
    showError(els.error, "");
    for (const f of Object.values(fields)) f.setAttribute("aria-invalid", "false");
    const decoder = page.decoder();
    const body = {
      model: page.model(), clean: fields.clean.value, corrupt: fields.corrupt.value,
      right: decoder ? fields.right.value : null, other: decoder ? fields.other.value : null,
      sweep: fields.sweep.value, site: fields.site.value, first_layer: Number(fields.first_layer.value), last_layer: Number(fields.last_layer.value),
    };
    try {
      const job = await runJob("/api/circuits/patching", body, {
        progress: els.progress, status: els.status, words: page.words,
        started(j) { running = j.id; cancel.disabled = false; },
      });
      if (job.status === "error") showError(els.error, job.message, fields[job.field] ?? null);
      else if (job.result) {
        drawPatching(els.out, job.result);
        numbers.drawn({ source: job.result.program_source });
      }
    } catch (error) {
      const field = error instanceof ApiError ? fields[error.fields[0]?.field] : null;
      showError(els.error, error.message, field ?? null);
    } finally {
      running = null;
      cancel.disabled = true;
      els.run.disabled = false;
    }
  });
}
