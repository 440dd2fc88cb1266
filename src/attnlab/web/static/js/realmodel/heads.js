// The layer overview (small multiples of every head, grouped by the KV head
// they read) and the focused query's row in the explorer's terms. Numbers and
// words come from the API as they are shown: this module places them (a token's
// exact text as its title) and computes nothing. The overview draws the model view's
// thumbnails (GET /api/models/jobs/{id}/model-view: at most 32 x 32 cells, each
// the largest share of its block of tokens), so switching layer fetches nothing.
import { fill, h, s } from "../shared/dom.js";
import { ink } from "./ink.js";

const MINI = 72; // px per small heatmap

function miniHeatmap(href) {
  return s("svg", { class: "rm-mini", viewBox: `0 0 ${MINI} ${MINI}`, width: MINI, height: MINI, "aria-hidden": "true" },
    s("image", { x: 0, y: 0, width: MINI, height: MINI, href, preserveAspectRatio: "none" }),
    s("rect", { class: "rm-mini-frame", x: 0, y: 0, width: MINI, height: MINI }));
}

/**
 * Draw every head of a layer as a button, grouped by KV head (GQA).
 * @param {HTMLElement} box
 * @param {{heads: object[], image: (hd: object) => string, kvGroups: number[][], selected: number,
 *   headNames: string[], groupNames: {label: string, title: {text: string}}[],
 *   onPick: (h: number) => void}} opts heads: the model view's entries of this layer, in head order;
 *   image(hd): the thumbnail's picture (a data URL); headNames, groupNames: the trace's (the server's words)
 */
export function drawHeads(box, { heads, image, kvGroups, selected, headNames, groupNames, onPick }) {
  const shared = kvGroups.some((g) => g.length > 1);
  const button = (hd) =>
    h("button", {
      type: "button", class: ["rm-head-button", hd.head === selected && "is-selected"],
      "data-head": hd.head, "aria-pressed": hd.head === selected ? "true" : "false",
      "aria-label": hd.button_label, title: hd.button_label,
      onclick: () => onPick(hd.head),
    },
    miniHeatmap(image(hd)),
    h("span", { class: "rm-head-name" }, headNames[hd.head]),
    h("span", { class: ["rm-kind", `kind-${hd.kind}`] }, hd.kind_short));
  if (!shared) {
    fill(box, h("div", { class: "rm-group" }, heads.map(button)));
    return;
  }
  fill(box, kvGroups.map((members, g) =>
    // named by aria-label, not an id: the model view draws these groups once per layer
    h("div", { class: "rm-group rm-gqa", role: "group", "aria-label": groupNames[g].label },
      h("p", { class: "rm-group-title" }, groupNames[g].title.text),
      h("div", { class: "rm-group-heads" }, members.map((m) => button(heads[m]))))));
}

/** Mark the selected head without rebuilding the buttons (keeps keyboard focus). */
export function markHead(box, selected) {
  for (const b of box.querySelectorAll(".rm-head-button")) {
    const on = Number(b.dataset.head) === selected;
    b.classList.toggle("is-selected", on);
    b.setAttribute("aria-pressed", on ? "true" : "false");
  }
}

/** Show "loading" in the row panel while a row is fetched (`title`, `computing`: the server's words). */
export function rowPending(box, title, computing) {
  fill(box, h("h3", { id: "rm-row-title" }, title), h("p", { class: "hint" }, computing));
}

/**
 * A sentence the server sent in parts ({text} as written, {token, exact} a token's label): each
 * token marked, its exact text as its title.
 */
function parts(said) {
  return said.parts.map((p) => ("token" in p ? h("strong", { title: p.exact }, p.token) : p.text));
}

/**
 * Draw one query's row: scaled scores and shares per key, the top sources, and the explorer's words.
 * @param {HTMLElement} box
 * @param {object} row the API's RowOut
 * @param {string} title the trace's row_title filled in (it names the KV head only where heads share them)
 */
export function drawRow(box, row, title) {
  const body = row.sources.map((src) =>
    h("tr", { class: src.allowed ? "" : "is-blocked", "data-index": src.index },
      h("th", { scope: "row", title: src.exact }, src.label),
      h("td", { class: "num" }, src.score_display),
      h("td", { class: "num" }, src.share_display),
      h("td", { class: "num", "data-field": "precise" }, src.share_precise),
    ));
  const table = row.table;
  fill(box,
    h("h3", { id: "rm-row-title" }, title),
    rowStrip(row),
    h("p", { class: "rm-top" }, parts(row.top_words)),
    h("details", { class: "rm-more" },
      h("summary", {}, row.more),
      h("div", { class: "rm-row-scroll", tabindex: "0", role: "region", "aria-label": table.region },
        h("table", { class: "rm-row-table" },
          h("caption", { class: "sr-only" }, table.caption),
          h("thead", {}, h("tr", {}, table.columns.map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, body))),
      // The explorer's Share paragraph names every key: kept here, with the table
      h("p", { class: "rm-words" }, row.share)));
}

/** The focused query's row drawn with its colours (one cell per key, the heatmap's ink). */
function rowStrip(row) {
  const n = row.sources.length;
  const cell = Math.max(3, Math.min(22, Math.floor(300 / n)));
  return s("svg", {
    class: "rm-strip", viewBox: `0 0 ${n * cell} ${cell}`, width: n * cell, height: cell,
    role: "img", "aria-label": row.strip_label,
  }, row.sources.map((src, j) => s("rect", {
    class: ["rm-cell", !src.allowed && "is-blocked"], x: j * cell, y: 0, width: cell - 1, height: cell,
    "fill-opacity": src.allowed ? String(ink(src.share)) : "1", "data-k": j,
  }, s("title", {}, src.title))));
}

/**
 * The head panel's numbers for "How is this computed?" (how.js): the opened layer and head, a query and a
 * key to pick (the query defaults to the focused token), and the number the panel holds for each choice.
 * @param {() => {job: object|null, result: object|null, headData: object|null, row: object|null,
 *   layer: number, head: number, focus: number|null}} getState the page's state
 * @returns {() => object|null} the context setupHow asks for
 */
export function headNumbers(getState) {
  let tokens = { of: null, options: [] }; // the trace's tokens as a picker's options, once per trace
  return () => {
    const state = getState();
    const head = state.headData;
    if (!state.job || !head) return null;
    if (tokens.of !== state.result) {
      tokens = { of: state.result, options: state.result.labels.map((label, i) => ({ value: i, label })) };
    }
    return {
      jobId: state.job.id,
      fields: { layer: state.layer, head: state.head },
      pickers: {
        query: { options: tokens.options, value: state.focus ?? state.result.labels.length - 1 },
        key: { options: tokens.options, value: null },
      },
      valueOf(choice, picked) { // the number this panel holds for the choice, as the API sent it
        const [q, k] = [Number(picked.query), Number(picked.key)];
        if (choice === "weight") return head.weights[q]?.[k] ?? undefined;
        if (choice in head && choice !== "weights") return head[choice] ?? undefined;
        const row = state.row; // the focused query's row: its scaled scores and shares
        const same = row && row.job === state.job.id && row.layer === state.layer && row.head === state.head;
        if (!same || row.index !== q || !row.sources[k]) return undefined;
        return { row_score: row.sources[k].score, row_share: row.sources[k].share }[choice] ?? undefined;
      },
    };
  };
}
