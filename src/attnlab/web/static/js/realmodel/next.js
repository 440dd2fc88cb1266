// "What comes next": the model's next-token probabilities after a chosen
// position, with temperature, top-k and top-p. The server recomputes the
// distribution from the kept logits (GET /api/models/jobs/{id}/next/{position});
// this module only draws the entries and says what each control removed.
import { byId, fill, h, text } from "../shared/dom.js";
import { setupHow } from "./how.js";
import { keptJSON } from "./job.js";

const FETCH = 20; // entries asked for

let ticket = 0;

/** A bar for a probability (the width is the server's p, drawn). */
function bar(p, cls) {
  return h("progress", { class: ["rm-next-bar", cls], max: "1", value: String(p), "aria-hidden": "true" });
}

function entryRow(e) {
  return h("tr", { class: e.kept ? "" : "is-removed", "data-id": e.id },
    h("td", { class: "num" }, e.rank_display),
    h("th", { scope: "row" }, h("code", { class: "rm-token-text", title: e.token_exact }, e.token_label)),
    h("td", { class: "num" }, e.logit_display),
    h("td", { class: "num" }, e.p_model_display),
    h("td", { class: "num" }, bar(e.p, "is-p"), " ", e.p_cell));
}

function table(entries, caption, columns) {
  return h("table", { class: "rm-next-table" },
    h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, entries.map(entryRow)));
}

/** Draw the server's answer. */
function draw(box, a) {
  const w = a.words;
  const top = a.entries.slice(0, w.shown_first);
  const rest = a.entries.slice(w.shown_first);
  fill(box,
    h("p", { class: "rm-next-context" }, w.context.text),
    table(top, w.caption, w.columns),
    rest.length ? h("details", { class: "rm-more" },
      h("summary", {}, w.more), table(rest, w.more_caption, w.columns)) : null,
    h("ul", { class: "rm-next-removed" }, a.removed.map((r) => h("li", { "data-control": r.control }, r.words.text))),
    h("p", { class: "hint" }, w.kept.text),
    h("p", { class: "rm-next-actual" }, w.actual.text));
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
  let shown = null; // the answer on screen, and its tokens as a picker's options
  // "How is this computed?" for a token's logit and probabilities, at the answer's position and controls
  const how = setupHow("next", () => {
    const job = getJob();
    if (!job || !shown || shown.answer.job !== job.id) return null; // nothing of this trace on screen yet
    const { answer, options } = shown;
    return {
      jobId: job.id,
      fields: { position: answer.position, temperature: answer.temperature, top_k: answer.top_k, top_p: answer.top_p },
      pickers: { token: { options, value: null } },
      valueOf(choice, picked) { // the number this view holds for the choice, as the API sent it
        const id = Number(picked.token);
        const e = answer.entries.find((x) => x.id === id) ?? (answer.actual?.id === id ? answer.actual : null);
        return e?.[choice];
      },
    };
  });
  panel.append(how.element);

  async function load() {
    const job = getJob();
    if (!job?.hasLogits) return;
    const mine = ++ticket;
    const [temperature, topK, topP] = controls.map((c) => c.value);
    const query = new URLSearchParams({ temperature, top_k: topK, top_p: topP, top: String(FETCH) });
    try {
      const answer = await keptJSON(
        `/api/models/jobs/${encodeURIComponent(job.id)}/next/${encodeURIComponent(position.value)}?${query}`);
      if (mine !== ticket) return;
      text(error, "");
      error.hidden = true;
      draw(out, answer);
      // the tokens listed, and the one that really follows when it is not among them
      const listed = answer.entries.map((e) => ({ value: e.id, label: e.token_label }));
      const actual = answer.actual;
      if (actual && !answer.entries.some((e) => e.id === actual.id)) listed.push({ value: actual.id, label: actual.token_label });
      shown = { answer, options: listed };
      how.refresh();
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
      fill(position, job.labels.map((label) => h("option", { value: label.index }, label.after)));
      position.value = String(job.labels.length - 1);
      load();
    },
  };
}
