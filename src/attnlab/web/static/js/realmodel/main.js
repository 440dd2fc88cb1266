// The Real model view: type a text, trace it with a real model (a job the
// server's model worker runs in turn, polled for its place in line and its
// progress: job.js), then look at one layer and head. One state object; draw() is a
// function of it. Switching layer or head fetches that one head
// (GET .../heads/{layer}/{head}); the layer's overview draws the model view's
// thumbnails, fetched once per trace; hovering a token fetches its row. Every view of
// the kept trace is fetched with job.js's keptJSON, which traces the text again if the
// server dropped it.
import { byId, fill, h, text } from "../shared/dom.js";
import { mountGlossary } from "../shared/glossary.js";
import { drawHeatmap, drawLines, drawTokens, markToken } from "./draw.js";
import { legend, legendBefore } from "./ink.js";
import { getJSON } from "../shared/http.js";
import { bound, getLimits } from "../shared/limits.js";
import { unpackRows } from "./packed.js";
import { setupCount } from "./count.js";
import { setupGenerate } from "./generate.js";
import { setupModels } from "./models.js";
import { setupNext } from "./next.js";
import { setupModelView } from "./modelview.js";
import { setupNeuron } from "./neuron.js";
import { setupJourney } from "./journey.js";
import { drawHeads, drawRow, headNumbers, markHead, rowPending } from "./heads.js";
import { setupCellTip } from "./tip.js";
import { setupProbe } from "./probe.js";
import { keptJSON, setupJob, trace } from "./job.js";
import { fillIn } from "./words.js";
import { setupHow } from "./how.js";

const state = {
  models: [], maxChars: 400, maxTokens: 64,
  about: null, // the chosen model as its files describe it (GET /api/models/about): shapes, cap, writer, chat
  words: {}, // the view's fixed sentences and templates (GET /api/models' words: lab/realmodel/page.py)
  job: null, // the API's JobOut of the trace shown (done)
  result: null, // job.result (tokens, labels, shown, kv_groups ...)
  layer: 0, head: 0, focus: null,
  headData: null, // the API's answer for the opened head (heads/{layer}/{head})
  view: null, // the model view (every head's thumbnail and kind), once per trace
  row: null, // the focused query's row as the API answered it (RowOut), for "How is this computed?"
};
let rowRequest = 0; // only the newest row answer is drawn
let headRequest = 0; // only the newest head answer is drawn
let tip = { update() {} };

const els = {};
let next = { show() {} };
let neuron = { show() {} };
let journey = { show() {} };
let how = { refresh() {} };
let modelView = { load: async () => {}, highlight() {}, select() {} };
let generate = { show() {} };
let models = { fillModels() {}, about: async () => {} };

function showError(message) {
  text(els.error, message || "");
  els.error.hidden = !message;
  els.text.setAttribute("aria-invalid", message ? "true" : "false");
}

let updateCount = () => {};

/** The chosen model as its files describe it (models.js): its note, its token cap, who writes. */
function showModelNote() {
  return models.about();
}

/** Ask again which path each model runs on (known once a job has loaded it). */
async function refreshModels() {
  state.models = (await getJSON("/api/models")).models;
  await showModelNote();
}

/** Trace the box's text with the chosen model (the "Look inside" action). */
function start() {
  return trace({ model: els.model.value, text: els.text.value });
}

/** Draw a finished trace job (job.js calls it once the job is done, its status line said). */
async function showTrace(job) {
  state.job = job;
  state.result = job.result;
  state.layer = Math.min(state.layer, job.result.n_layer - 1);
  state.head = Math.min(state.head, job.result.n_head - 1);
  state.focus = null;
  state.headData = null;
  state.view = null;
  delete els.heatmap.dataset.drawn; // these markers say what is on screen: nothing of this trace yet
  delete els.row.dataset.drawn;
  delete els.heads.dataset.layer;
  refreshModels().catch(() => {});  // only the note waits for it
  fillPickers();
  next.show();
  neuron.show(); // no query of the new text is focused yet: the neuron view and bridge say so
  const id = job.id;
  modelView.load(id).then((view) => {
    if (state.job.id !== id) return; // another text was traced meanwhile
    state.view = view;
    // the thumbnails' legend (it says when they are binned), beside the layer's heads and the whole model's
    legendBefore(els.heads, view.legend);
    legendBefore(byId("rm-model-grid"), view.legend);
    drawLayerHeads();
    modelView.select(state.layer, state.head);
  }).catch((error) => showError(error.message));
  await loadHead();
}

function fillPickers() {
  const r = state.result; // the names are the server's (the trace's layer_names, head_options)
  fill(els.layer, r.layer_names.map((name, i) => h("option", { value: i }, name)));
  fill(els.head, r.head_options.map((name, i) => h("option", { value: i }, name)));
  els.layer.value = String(state.layer);
  els.head.value = String(state.head);
  els.view.hidden = false;
  els.layerView.hidden = false;
}

/** Fetch the opened head (weights, display strings, kind) and draw it. */
async function loadHead() {
  const ticket = ++headRequest;
  const { layer, head } = state;
  const data = await keptJSON(`/api/models/jobs/${encodeURIComponent(state.job.id)}/heads/${layer}/${head}?packed=true`);
  if (ticket !== headRequest) return; // a newer layer or head was picked meanwhile
  data.weights = unpackRows(data.weights_f32, data.n_tokens); // the same numbers as ?packed=false's JSON
  state.headData = data;
  drawAll();
}

let tokensOf = null; // the result whose token buttons are drawn (rebuilt only for a new trace)

function drawAll() {
  const r = state.result;
  const head = state.headData;
  if (!r || !head) return;
  // each token as the server shows it: its label, its short form on an axis, its exact text on hover
  const opts = { tokens: r.shown, head, focus: state.focus, zoom: Number(els.zoom.value) };
  if (tokensOf !== r) drawTokens(els.tokens, { tokens: r.shown, focus: state.focus, onFocus: setFocus });
  else markToken(els.tokens, state.focus);
  tokensOf = r;
  tip.update(drawHeatmap(els.heatmap, opts));
  drawLines(els.lines, opts);
  text(els.linesCap, state.words[els.lines.dataset.strongestOnly === "true" ? "lines_strongest" : "lines_caption"]);
  text(els.kind, head.about_text); // the server's sentences (lab/realmodel/kinds.py), with their claims
  fill(els.legend, legend(head.legend));
  els.heatmap.dataset.drawn = `${head.layer}/${head.head}`; // what is on screen (tests and benchmarks wait for it)
  how.refresh();
}

/** The opened layer's heads as the model view's thumbnails (no request: fetched once per trace). */
function drawLayerHeads() {
  const view = state.view;
  if (!view) return;
  const heads = view.heads.slice(state.layer * view.n_head, (state.layer + 1) * view.n_head);
  drawHeads(els.heads, {
    heads, image: modelView.image, kvGroups: state.result.kv_groups, selected: state.head,
    headNames: state.result.head_names, groupNames: state.result.kv_group_names,
    onPick: (hd) => pickHead(hd, { reveal: true }),
  });
  els.heads.dataset.layer = String(state.layer);
}

async function loadRow() {
  if (state.focus === null || !state.job) return;
  const ticket = ++rowRequest;
  const { layer, head, focus } = state;
  rowPending(els.row, fillIn(state.words.row_pending, { query: state.result.labels[focus], layer, head }),
    state.words.row_computing);
  try {
    const row = await keptJSON(`/api/models/jobs/${encodeURIComponent(state.job.id)}/rows/${layer}/${head}/${focus}`);
    if (ticket !== rowRequest) return; // the pointer moved on: the newer hover asks for its own panels
    // the trace's row_title says which KV head the row reads only where heads share them
    drawRow(els.row, row, fillIn(state.result.row_title, { query: row.query, layer, head, kv_head: row.kv_head }));
    els.row.dataset.drawn = `${layer}/${head}/${focus}`;
    state.row = row;
    how.refresh();
  } catch (error) {
    if (ticket === rowRequest) showError(error.message);
  }
  // then the panels below: asked after the row, they never slow the row the hover is for
  if (ticket !== rowRequest) return;
  neuron.show();
  journey.show();
}

function setFocus(i) {
  if (state.focus === i) return;
  state.focus = i;
  modelView.highlight(i); // linked hover: the token's row and column in every head
  drawAll();
  loadRow();
}

function pickHead(hd, { reveal = false } = {}) {
  state.head = hd;
  els.head.value = String(hd);
  markHead(els.heads, hd);
  loadHead().catch((error) => showError(error.message));
  loadRow();
  modelView.select(state.layer, hd);
  // a thumbnail far below opened this head: bring the opened head into view
  if (reveal) els.view.scrollIntoView({ block: "start" });
}

/** The controls' ranges and the words that state them, as the server declares them (GET /api/limits). */
function applyLimits(limits) {
  bound(byId("rm-next-temperature"), limits.temperature_min, limits.temperature_max);
  bound(byId("rm-next-top-k"), 0, limits.top_k_max); // 0 is off
  bound(byId("rm-next-top-p"), null, limits.top_p_max); // more than 0: no inclusive minimum to give
  bound(byId("rm-gen-tokens"), limits.min_new_tokens, limits.max_new_tokens);
  text(document.querySelector('label[for="rm-gen-tokens"]'), limits.words.new_tokens.text);
}

async function init() {
  for (const id of ["text", "count", "model", "model-note", "run", "error", "progress", "status", "view",
    "layer", "head", "head-kind", "legend", "zoom", "tokens", "heatmap", "lines", "lines-cap", "row", "layer-view",
    "heads"]) {
    els[id.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = byId(`rm-${id}`);
  }
  els.kind = els.headKind;
  setupJob({
    status: els.status, progress: els.progress, words: () => state.words, done: showTrace,
    busy(on) {
      if (on) showError("");
      els.run.disabled = on;
    },
    failed(error) {
      showError(error.message);
      text(els.status, state.words.nothing_traced);
    },
  });
  tip = setupCellTip(els.heatmap.closest("figure"), els.heatmap);
  updateCount = setupCount(els, () => ({
    cap: state.about?.max_tokens ?? state.maxTokens, maxChars: state.maxChars, words: state.words,
  }));
  els.text.addEventListener("input", () => updateCount());
  els.text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); start(); }
  });
  els.run.addEventListener("click", start);
  setupProbe(els.text, start, showError);
  modelView = setupModelView((layer, hd) => {
    state.layer = layer;
    els.layer.value = String(layer);
    drawLayerHeads();
    pickHead(hd, { reveal: true });
  });
  journey = setupJourney(() => state.focus === null || !state.result ? null : { jobId: state.job.id, index: state.focus });
  neuron = setupNeuron(() => state.focus === null || !state.result ? null : {
    jobId: state.job.id, layer: state.layer, head: state.head, query: state.focus, labels: state.result.labels,
  }, () => state.words);
  next = setupNext(() => state.result && {
    id: state.job.id, labels: state.result.shown, hasLogits: Boolean(state.result.has_logits),
  });
  how = setupHow("head", headNumbers(() => state));
  byId("rm-bridge-open").parentElement.before(how.element);
  generate = setupGenerate(els.text, () => state.words, () => refreshModels().catch(() => {}));
  models = setupModels(els, () => state.words, (about) => {
    state.about = about;
    if (about) generate.show(about);
    updateCount();
  });
  els.model.addEventListener("change", () => { showModelNote(); updateCount(); });
  // the Circuits page opens on this page's text and model
  const circuits = byId("rm-circuits");
  const linkCircuits = () => {
    circuits.href = `/circuits?${new URLSearchParams({ model: els.model.value, text: els.text.value })}`;
  };
  els.text.addEventListener("input", linkCircuits);
  els.model.addEventListener("change", linkCircuits);
  els.layer.addEventListener("change", () => {
    state.layer = Number(els.layer.value);
    drawLayerHeads();
    modelView.select(state.layer, state.head);
    loadHead().catch((error) => showError(error.message));
    loadRow();
  });
  els.head.addEventListener("change", () => pickHead(Number(els.head.value)));
  els.zoom.addEventListener("change", () => drawAll());
  const [info, limits] = await Promise.all([getJSON("/api/models"), getLimits()]);
  applyLimits(limits);
  state.models = info.models;
  state.maxChars = info.max_chars;
  state.maxTokens = info.max_tokens;
  state.words = info.words;
  models.fillModels(info);
  updateCount();
  linkCircuits();
  await showModelNote();
  document.body.dataset.ready = "true";
}

init().catch((error) => showError(error.message));
mountGlossary(); // the jargon defined where it first appears (lab/glossary.py)
