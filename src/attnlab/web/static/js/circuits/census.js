// Census: every head's score on the text, as a layers × heads map and a ranked list; a head
// opens its evidence (the values its score averages, and the query rows they come from). The
// text is traced as on the Real model page (realmodel/job.js: a trace job, shared with that
// page, traced again if the server dropped it); the census and the evidence are read from the
// kept trace (GET /api/circuits/census/{id}...). drawCensus and drawEvidence only draw an
// answer: the CensusView notebook widget (widgets/circuits.js) draws the kernel's with them.
import { byId, fill, h, text } from "../shared/dom.js";
import { keptJSON, setupJob, trace } from "../realmodel/job.js";
import { drawGrid } from "./grid.js";
import { setupNumbers } from "./numbers.js";
import { chips, markNumber, options, said, showError } from "./place.js";

/**
 * Draw a census answer into `out`: its sentences, the layers × heads map and the ranked heads.
 * @param {HTMLElement} out
 * @param {object} data a census (GET /api/circuits/census/{id}: lab/circuits/census.census_view)
 * @param {{picked?: [number, number]|null, onPick: (layer: number, head: number) => void, rankedId?: string}} opts
 *   rankedId: the ranked list's heading id (unique on the page)
 */
export function drawCensus(out, data, { picked = null, onPick, rankedId = "ci-ranked-h" }) {
  const map = h("div", { class: "ci-map" });
  const ranked = h("ol", { class: "ci-ranked", "aria-labelledby": rankedId }, data.ranked.map((r) => h("li", {},
    markNumber(h("button", {
      type: "button", title: r.title, "data-layer": r.layer, "data-head": r.head,
      class: picked && picked[0] === r.layer && picked[1] === r.head ? "is-selected" : null,
      onclick: () => onPick(r.layer, r.head),
    }, h("span", {}, r.label), h("span", { class: "ci-value" }, r.display),
    h("span", { class: "ci-kind" }, r.kind_name)), r.how, r.value))));
  fill(out, said(data.definition), said(data.summary), said(data.reach),
    h("div", { class: "ci-grid-box" }, map,
      h("div", {}, h("h3", { id: rankedId }, data.ranked_title), ranked)));
  drawGrid(map, data.map, { onPick, picked, name: "census" });
  out.dataset.score = data.score;
  if (data.job) out.dataset.job = data.job;
}

/** Mark head (`layer`, `head`) picked in the ranked list `drawCensus` drew into `out`. */
export function markPicked(out, layer, head) {
  for (const b of out.querySelectorAll(".ci-ranked button")) {
    b.classList.toggle("is-selected", Number(b.dataset.layer) === layer && Number(b.dataset.head) === head);
  }
}

/**
 * Draw one head's evidence into `box`: the value each query gives its score, and the rows it comes from.
 * @param {HTMLElement} box
 * @param {object} e an evidence answer (lab/circuits/census.evidence)
 */
export function drawEvidence(box, e) {
  fill(box,
    h("h3", {}, e.title), said(e.definition),
    h("p", { class: "hint" }, e.queries_label), chips(e.queries.map((q) => ({ ...q, title: q.title }))),
    said(e.averaged),
    h("h4", {}, e.rows_title),
    h("div", { class: "ci-rows" }, e.rows.map((row) => h("div", { class: "ci-row", "data-query": row.query },
      said(row.words), chips(row.keys)))));
  box.dataset.head = `${e.layer}/${e.head}`;
}

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
  const numbers = setupNumbers(els.out, "census", page);

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
      drawCensus(els.out, data, { picked, onPick: openHead });
      numbers.drawn({ jobId: job.id });
      if (picked) await openHead(...picked);
    } catch (error) {
      if (mine === ticket) showError(els.error, error.message);
    }
  }

  async function openHead(layer, head) {
    picked = [layer, head];
    markPicked(els.out, layer, head);
    const mine = ++ticket;
    const url = `/api/circuits/census/${encodeURIComponent(job.id)}/heads/${layer}/${head}?score=${encodeURIComponent(els.score.value)}`;
    try {
      const e = await keptJSON(url);
      if (mine !== ticket) return;
      drawEvidence(els.evidence, e);
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
