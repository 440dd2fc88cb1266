// Census: every head's score on the text, as a layers × heads map and a ranked list; a head
// opens its evidence (the values its score averages, and the query rows they come from). The
// text is traced as on the Real model page (realmodel/job.js: a trace job, shared with that
// page, traced again if the server dropped it); the census and the evidence are read from the
// kept trace (GET /api/circuits/census/{id}...).
import { byId, fill, h, text } from "../shared/dom.js";
import { keptJSON, setupJob, trace } from "../realmodel/job.js";
import { drawGrid } from "./grid.js";
import { chips, options, said, showError } from "./place.js";

/**
 * @param {{model: () => string, text: () => string, words: () => object}} page
 * @returns {{setScores: (scores: {score: string, label: string}[]) => void, run: () => Promise<void>}}
 */
export function setupCensus(page) {
  const els = {
    run: byId("ci-census-run"), score: byId("ci-score"), progress: byId("ci-census-progress"),
    status: byId("ci-census-status"), error: byId("ci-census-error"), out: byId("ci-census-out"),
    evidence: byId("ci-evidence"),
  };
  let job = null; // the finished trace job (JobOut) the census reads
  let picked = null; // [layer, head] whose evidence is open
  let ticket = 0; // only the newest answer is drawn

  setupJob({
    status: els.status, progress: els.progress, words: page.words,
    busy(on) {
      els.run.disabled = on;
      if (on) showError(els.error, "");
    },
    async done(finished) {
      job = finished;
      picked = null;
      await load();
    },
    failed(error) {
      showError(els.error, error.message);
      text(els.status, page.words().nothing_traced);
    },
  });

  async function load() {
    const mine = ++ticket;
    const score = els.score.value;
    try {
      const data = await keptJSON(`/api/circuits/census/${encodeURIComponent(job.id)}?score=${encodeURIComponent(score)}`);
      if (mine !== ticket) return;
      draw(data);
      if (picked) await openHead(...picked);
    } catch (error) {
      if (mine === ticket) showError(els.error, error.message);
    }
  }

  function draw(data) {
    const map = h("div", { class: "ci-map" });
    const ranked = h("ol", { class: "ci-ranked", "aria-labelledby": "ci-ranked-h" }, data.ranked.map((r) => h("li", {},
      h("button", {
        type: "button", title: r.title, "data-layer": r.layer, "data-head": r.head,
        class: picked && picked[0] === r.layer && picked[1] === r.head ? "is-selected" : null,
        onclick: () => openHead(r.layer, r.head),
      }, h("span", {}, r.label), h("span", { class: "ci-value" }, r.display), h("span", { class: "ci-kind" }, r.kind_name)))));
    fill(els.out, said(data.definition), said(data.summary), said(data.reach),
      h("div", { class: "ci-grid-box" }, map,
        h("div", {}, h("h3", { id: "ci-ranked-h" }, data.ranked_title), ranked)));
    drawGrid(map, data.map, { onPick: (layer, head) => openHead(layer, head), picked, name: "census" });
    els.out.dataset.score = data.score;
    els.out.dataset.job = data.job;
  }

  async function openHead(layer, head) {
    picked = [layer, head];
    for (const b of els.out.querySelectorAll(".ci-ranked button")) {
      b.classList.toggle("is-selected", Number(b.dataset.layer) === layer && Number(b.dataset.head) === head);
    }
    const mine = ++ticket;
    const url = `/api/circuits/census/${encodeURIComponent(job.id)}/heads/${layer}/${head}?score=${encodeURIComponent(els.score.value)}`;
    try {
      const e = await keptJSON(url);
      if (mine !== ticket) return;
      fill(els.evidence,
        h("h3", {}, e.title), said(e.definition),
        h("p", { class: "hint" }, e.queries_label), chips(e.queries.map((q) => ({ ...q, title: q.title }))),
        said(e.averaged),
        h("h4", {}, e.rows_title),
        h("div", { class: "ci-rows" }, e.rows.map((row) => h("div", { class: "ci-row", "data-query": row.query },
          said(row.words), chips(row.keys)))));
      els.evidence.dataset.head = `${layer}/${head}`;
    } catch (error) {
      if (mine === ticket) showError(els.error, error.message);
    }
  }

  els.run.addEventListener("click", () => trace({ model: page.model(), text: page.text() }));
  els.score.addEventListener("change", () => { if (job) load(); });

  return {
    setScores(scores) { options(els.score, scores.map((s) => ({ value: s.score, label: s.label })), els.score.value || scores[0].score); },
    run: () => trace({ model: page.model(), text: page.text() }),
  };
}
