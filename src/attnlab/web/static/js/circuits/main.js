// The Circuits page: one text and one model for the census, the ablation, the lens and the head
// (the patching sweep has its own two prompts). It opens on the Real model page's text and model
// when the link carries them (/circuits?model=smollm2&text=...). The models' pickers (layers,
// heads, scores) come from GET /api/circuits/models, the text's positions from POST
// /api/circuits/{model}/tokens (counted by the tokenizer alone, as the learner types); each
// section (census.js, ablation.js, patching.js, lens.js, head.js) runs its own request and
// places the server's strings. The page writes no word of its own (its words: the page's data
// block, lab/circuits/page.py).
import { byId, text } from "../shared/dom.js";
import { mountGlossary } from "../shared/glossary.js";
import { getJSON, postJSON } from "../shared/http.js";
import { pageWords } from "../shared/words.js";
import { fillIn } from "../realmodel/words.js";
import { setupAblation } from "./ablation.js";
import { setupCensus } from "./census.js";
import { setupHead } from "./head.js";
import { setupLens } from "./lens.js";
import { setupPatching } from "./patching.js";
import { options, showError } from "./place.js";

const COUNT_DELAY_MS = 250; // typing settles before the positions are asked for

const state = { models: [], words: pageWords().circuits ?? {} };
const els = {};

function model() {
  return state.models.find((m) => m.name === els.model.value) ?? state.models[0];
}

const page = {
  model: () => els.model.value,
  text: () => els.text.value,
  words: () => state.words,
  decoder: () => Boolean(model()?.decoder),
};

/** The chosen model's pickers, and the sections it has (an encoder has no lens and no attribution). */
function applyModel() {
  const m = model();
  for (const select of document.querySelectorAll(".ci-layers")) options(select, m.layers, select.value);
  options(byId("ci-first-layer"), m.layers, 0);
  options(byId("ci-last-layer"), m.layers, m.n_layer - 1);
  options(byId("ci-ablation-layer"), m.layers, m.n_layer - 1);
  options(byId("ci-head-head"), m.heads, byId("ci-head-head").value);
  for (const el of document.querySelectorAll(".ci-decoder-only")) el.hidden = !m.decoder;
  byId("ci-ablation-layer-field").hidden = m.decoder;
  text(els.modelNote, m.note);
  census.setScores(m.scores);
  countSoon(0);
}

let countTimer = null;
let countTicket = 0;

function countSoon(delay = COUNT_DELAY_MS) {
  clearTimeout(countTimer);
  countTimer = setTimeout(count, delay);
}

/** Ask for the text's tokens; fill every position picker with them (the last chosen). */
async function count() {
  const mine = ++countTicket;
  try {
    const found = await postJSON(`/api/circuits/${encodeURIComponent(els.model.value)}/tokens`, { text: els.text.value });
    if (mine !== countTicket) return;
    text(els.count, found.message);
    for (const select of document.querySelectorAll(".ci-positions")) {
      const keep = Number(select.value) < found.count && select.dataset.text === els.text.value ? select.value : found.last;
      options(select, found.positions, keep);
      select.dataset.text = els.text.value;
    }
  } catch (error) {
    if (mine === countTicket) text(els.count, fillIn(state.words.count_failed, { message: error.message }));
  }
}

/** "Repeat a random run": the server's probe text and its note (with the seed), then the census. */
async function probe() {
  els.probe.disabled = true;
  try {
    const found = await getJSON("/api/models/probe");
    els.text.value = found.text;
    text(els.probeNote, found.note.text);
    els.probeNote.dataset.seed = String(found.seed);
    countSoon(0);
    await census.run();
  } catch (error) {
    showError(els.error, error.message);
  } finally {
    els.probe.disabled = false;
  }
}

let census = null;

async function init() {
  for (const id of ["text", "count", "model", "model-note", "probe", "probe-note", "error"]) {
    els[id.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = byId(`ci-${id}`);
  }
  census = setupCensus(page);
  setupAblation(page);
  setupPatching(page);
  setupLens(page);
  setupHead(page);
  const asked = new URLSearchParams(window.location.search);
  if (asked.get("text")) els.text.value = asked.get("text");
  state.models = (await getJSON("/api/circuits/models")).models;
  const first = asked.get("model") ?? (state.models.find((m) => m.decoder) ?? state.models[0]).name;
  options(els.model, state.models.map((m) => ({ value: m.name, label: m.title })), first);
  applyModel();
  els.model.addEventListener("change", applyModel);
  els.text.addEventListener("input", () => countSoon());
  els.probe.addEventListener("click", probe);
  document.body.dataset.ready = "true";
}

init().catch((error) => showError(byId("ci-error"), error.message));
mountGlossary(); // the jargon defined where it first appears (lab/glossary.py)
