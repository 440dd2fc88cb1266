// "What comes next": the model's next-token probabilities after a chosen
// position, with temperature, top-k and top-p. The server recomputes the
// distribution from the kept logits (GET /api/models/jobs/{id}/next/{position});
// this module only draws the entries and says what each control removed.
import { byId, fill, h, text } from "../shared/dom.js";
import { getJson } from "./api.js";

const TOP = 5; // entries shown first; the rest on demand
const FETCH = 20; // entries asked for

let ticket = 0;

/** A bar for a probability (the width is the server's p, drawn). */
function bar(p, cls) {
  return h("progress", { class: ["rm-next-bar", cls], max: "1", value: String(p), "aria-hidden": "true" });
}

function entryRow(e) {
  return h("tr", { class: e.kept ? "" : "is-removed", "data-id": e.id },
    h("td", { class: "num" }, String(e.rank)),
    h("th", { scope: "row" }, h("code", {}, JSON.stringify(e.token))),
    h("td", { class: "num" }, e.logit.toFixed(2)),
    h("td", { class: "num" }, e.p_model_display),
    h("td", { class: "num" }, bar(e.p, "is-p"), ` ${e.p_display}`, e.kept ? "" : " (removed)"));
}

function table(entries, caption) {
  return h("table", { class: "rm-next-table" },
    h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "rank"), h("th", { scope: "col" }, "token"), h("th", { scope: "col" }, "logit"),
      h("th", { scope: "col" }, "p (model)"), h("th", { scope: "col" }, "p (after the controls)"))),
    h("tbody", {}, entries.map(entryRow)));
}

/** Draw the server's answer. */
function draw(box, a) {
  const top = a.entries.slice(0, TOP);
  const rest = a.entries.slice(TOP);
  fill(box,
    h("p", { class: "rm-next-context" }, `After token ${a.context_label} (of a ${a.vocab.toLocaleString("en")}-token vocabulary):`),
    table(top, `The ${top.length} likeliest next tokens`),
    rest.length ? h("details", { class: "rm-more" },
      h("summary", {}, `${rest.length} more tokens`), table(rest, "The next likeliest tokens")) : null,
    h("ul", { class: "rm-next-removed" }, a.removed.map((r) => h("li", { "data-control": r.control }, r.words))),
    h("p", { class: "hint" }, `${a.kept.toLocaleString("en")} tokens kept, holding ${(a.kept_mass_model * 100).toFixed(1)}% of the model's own probability.`),
    a.actual
      ? h("p", { class: "rm-next-actual" }, "In the text the next token is ", h("code", {}, JSON.stringify(a.actual.token)),
        `: rank ${a.actual.rank}, p ${a.actual.p_display}.`)
      : h("p", { class: "rm-next-actual" }, "This is the last token: what follows is the model's to write."));
}

/**
 * Wire the panel. `getJob()` gives {id, labels, hasLogits} of the current trace.
 * @returns {{show: () => void}} call after every new trace
 */
export function setupNext(getJob) {
  const panel = byId("rm-next");
  const position = byId("rm-next-position");
  const out = byId("rm-next-out");
  const error = byId("rm-next-error");
  const controls = ["temperature", "top-k", "top-p"].map((id) => byId(`rm-next-${id}`));

  async function load() {
    const job = getJob();
    if (!job?.hasLogits) return;
    const mine = ++ticket;
    const [temperature, topK, topP] = controls.map((c) => c.value);
    const query = new URLSearchParams({ temperature, top_k: topK, top_p: topP, top: String(FETCH) });
    try {
      const answer = await getJson(
        `/api/models/jobs/${encodeURIComponent(job.id)}/next/${encodeURIComponent(position.value)}?${query}`);
      if (mine !== ticket) return;
      text(error, "");
      error.hidden = true;
      draw(out, answer);
    } catch (problem) {
      if (mine !== ticket) return;
      text(error, problem.message);
      error.hidden = false;
    }
  }

  position.addEventListener("change", load);
  for (const c of controls) c.addEventListener("change", load);
  byId("rm-next-run").addEventListener("click", load);

  return {
    show() {
      const job = getJob();
      panel.hidden = !job?.hasLogits;
      if (panel.hidden) return;
      fill(position, job.labels.map((label, i) => h("option", { value: i }, `after ${label}`)));
      position.value = String(job.labels.length - 1);
      load();
    },
  };
}
