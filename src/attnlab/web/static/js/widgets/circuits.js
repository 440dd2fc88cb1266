// The CensusView, LensView and PatchView widgets' view (which one: `_kind`): the Circuits page's
// own drawing (circuits/census.js, lens.js, patching.js, grid.js) of what the kernel sends, in
// the same shapes as the page's answers: `_census` and `_evidence`, `_lens`, a sweep's `_view`
// and its status line `_status`. Every word is the lab's: the page's headings and labels in
// `_words` (lab/circuits/page.py), the rest in the answers. A pick sets a trait (`score`,
// `picked`, `position`) and the kernel answers with new JSON; Cancel sends {event: "cancel"},
// which sets the running sweep's cancel event. Ids are prefixed per widget.

import { fill, h, text } from "../shared/dom.js";
import { drawCensus, drawEvidence, markPicked } from "../circuits/census.js";
import { drawLens } from "../circuits/lens.js";
import { drawPatching } from "../circuits/patching.js";
import { options } from "../circuits/place.js";

let count = 0;

function save(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

/** The view's panel: its heading and hint (the page's words), then `body`. */
function panel(id, title, hint, ...body) {
  return h("div", { class: "ci-main" },
    h("section", { class: "rm-panel", "aria-labelledby": id("title") },
      h("h2", { id: id("title") }, title), h("p", { class: "hint" }, hint), ...body));
}

/** A labelled picker in the page's controls row. */
function picker(id, name, label, select) {
  return h("div", { class: "rm-controls" },
    h("div", { class: "rm-field" }, h("label", { for: id(name) }, label), select));
}

function mountCensus(el, model, id) {
  const words = model.get("_words");
  const score = h("select", { id: id("score") });
  score.addEventListener("change", () => save(model, "score", score.value));
  const out = h("div", { class: "ci-out", "aria-live": "polite" });
  const evidence = h("div", { class: "ci-evidence" });
  const probe = model.get("_probe");
  el.replaceChildren(panel(id, words.census_title, words.census_hint,
    probe.text ? h("p", { class: "hint", "data-seed": probe.claims.seed }, probe.text) : null,
    picker(id, "score", words.score_label, score), out, evidence));
  const pick = (layer, head) => save(model, "picked", [layer, head]);

  function drawPicked() {
    const e = model.get("_evidence");
    if (e.title) {
      drawEvidence(evidence, e);
      markPicked(out, e.layer, e.head);
    } else {
      fill(evidence, h("p", { class: "hint" }, words.evidence_hint));
      delete evidence.dataset.head;
    }
  }

  function draw() {
    const data = model.get("_census");
    options(score, data.scores.map((s) => ({ value: s.score, label: s.label })), model.get("score"));
    const picked = model.get("picked");
    drawCensus(out, data, { picked: picked.length ? picked : null, onPick: pick, rankedId: id("ranked") });
    drawPicked();
  }

  model.on("change:_census", draw);
  model.on("change:_evidence", drawPicked);
  draw();
  return () => {
    model.off("change:_census", draw);
    model.off("change:_evidence", drawPicked);
  };
}

function mountLens(el, model, id) {
  const words = model.get("_words");
  const position = h("select", { id: id("position") });
  options(position, model.get("_positions"), model.get("position"));
  position.addEventListener("change", () => save(model, "position", Number(position.value)));
  const out = h("div", { class: "ci-out", "aria-live": "polite" });
  el.replaceChildren(panel(id, words.lens_title, words.lens_hint,
    picker(id, "position", words.position_label, position), out));

  function draw() {
    position.value = String(model.get("position"));
    drawLens(out, model.get("_lens"));
  }

  model.on("change:_lens", draw);
  draw();
  return () => model.off("change:_lens", draw);
}

function mountPatch(el, model, id) {
  const words = model.get("_words");
  const progress = h("progress", { max: "1", value: "0", "aria-labelledby": id("status") });
  const status = h("p", { id: id("status"), class: "hint", role: "status" });
  const cancel = h("button", { type: "button" }, words.patch_cancel);
  cancel.addEventListener("click", () => {
    cancel.disabled = true;
    model.send({ event: "cancel" });
  });
  const out = h("div", { class: "ci-out", "aria-live": "polite" });
  el.replaceChildren(panel(id, words.patching_title, words.patching_hint,
    h("div", { class: "rm-controls" }, h("div", { class: "rm-field rm-run ci-cancel" }, cancel)),
    h("div", { class: "rm-progress-line" }, progress, status), out));

  function drawStatus() {
    progress.value = model.get("progress");
    text(status, model.get("_status").stage_display);
    cancel.disabled = model.get("status") !== "running" || model.get("cancel_asked");
    out.dataset.status = model.get("status");
  }

  function drawView() {
    const v = model.get("_view");
    if (v.sweep) drawPatching(out, v);
  }

  model.on("change:_status", drawStatus);
  model.on("change:_view", drawView);
  drawView();
  drawStatus();
  return () => {
    model.off("change:_status", drawStatus);
    model.off("change:_view", drawView);
  };
}

const VIEWS = { census: mountCensus, lens: mountLens, patch: mountPatch };

/** Mount the view the kernel names (`_kind`) into `el`; returns the cleanup function. */
export function mount(el, model) {
  const prefix = `attnlab-c${count}`;
  count += 1;
  return VIEWS[model.get("_kind")](el, model, (name) => `${prefix}-${name}`);
}
