// The teacher's view: the class live (GET's answer, then a view on /api/class/teacher/ws after
// every change), tables that sort and filter from the keyboard, the predictions' bars, one
// learner's record, the snapshot shown to the room, and the room's controls (pause, names,
// pace, push, snapshot, end, delete). The view's strings are the server's; this module places
// them, sorts rows by the sort keys the server gave, and filters by what a row shows.

import { byId, fill, h, lines, text } from "../shared/dom.js";
import { ApiError, getJSON, postJSON } from "../shared/http.js";
import { pageWords } from "../shared/words.js";
import { live } from "./live.js";

const words = pageWords().classroom;
const API = "/api/class/teacher";
const ui = {
  view: null,
  sort: { learners: { key: "name", up: true }, challenges: { key: null, up: true } },
  filter: "",
  picks: [],
  detail: null, // the learner whose record is open
  detailMark: "", // that learner's counts when their record was drawn: redrawn only when they change
  paceMark: "", // the pace the boxes show: a view of the same pace leaves the teacher's ticks alone
};

const el = {
  live: byId("cl-live"), status: byId("cl-status"), summary: byId("cl-summary"), error: byId("cl-error"),
  pause: byId("cl-pause"), anonymise: byId("cl-anonymise"), places: byId("cl-pace-places"),
  paceNow: byId("cl-pace-now"), pushed: byId("cl-pushed"), pushError: byId("cl-push-error"),
  link: byId("cl-push-link"), challenge: byId("cl-push-challenge"), filter: byId("cl-filter"),
  learners: byId("cl-learners-table"), challenges: byId("cl-challenges-table"),
  predictions: byId("cl-predictions-list"), detail: byId("cl-detail"), detailWords: byId("cl-detail-words"),
  detailLines: byId("cl-detail-lines"), room: byId("cl-room"), roomWords: byId("cl-room-words"),
  cards: byId("cl-room-cards"), big: byId("cl-big"),
};

async function act(path, body, where = el.error) {
  try {
    const answer = await postJSON(`${API}/${path}`, body);
    lines(where, []);
    return answer;
  } catch (error) {
    lines(where, error instanceof ApiError ? error.messages : [pageWords().http.failed]);
    return null;
  }
}

// --- tables ---------------------------------------------------------------------------

function sorted(rows, sort) {
  if (!sort.key) return rows;
  const k = sort.key;
  return [...rows].sort((a, b) => {
    const x = a.sort[k];
    const y = b.sort[k];
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return sort.up ? c : -c;
  });
}

/** Where the keyboard focus is inside `table` (a sort button's key or a row's open button), to restore it. */
function focusIn(table) {
  const el = document.activeElement;
  if (!el || !table.contains(el)) return null;
  return el.dataset.key ? `button[data-key="${el.dataset.key}"]` : el.closest("tr") ? `tr[data-id="${el.closest("tr").dataset.id}"] button` : null;
}

function drawTable(table, name, data, firstCell) {
  const focused = focusIn(table);
  const sort = ui.sort[name];
  const head = h("tr", null, data.columns.map((col) => {
    const state = sort.key === col.key ? (sort.up ? "ascending" : "descending") : "none";
    const button = h("button", { type: "button", class: "cl-sort", "aria-label": col.sort, onclick: () => {
      ui.sort[name] = { key: col.key, up: sort.key === col.key ? !sort.up : true };
      draw();
      table.querySelector(`button[data-key="${col.key}"]`)?.focus();
    }, "data-key": col.key }, col.label);
    return h("th", { scope: "col", "aria-sort": state }, button);
  }));
  const rows = sorted(data.rows, sort).map((row) => h("tr", { "data-id": row.id ?? row.key },
    data.columns.map((col, i) => (i === 0 ? h("th", { scope: "row" }, firstCell(row)) : h("td", null, row.cells[col.key])))));
  fill(table, h("thead", null, head), h("tbody", null, rows));
  if (focused) table.querySelector(focused)?.focus();
}

function drawLearners(view) {
  const wanted = ui.filter.trim().toLowerCase();
  const rows = view.learners.rows.filter((r) => !wanted
    || r.cells.name.toLowerCase().includes(wanted) || r.cells.where.toLowerCase().includes(wanted));
  if (!view.learners.rows.length) {
    fill(el.learners, h("caption", null, words.no_learners));
    return;
  }
  drawTable(el.learners, "learners", { columns: view.learners.columns, rows }, (row) =>
    h("button", { type: "button", class: "cl-open", "aria-label": row.open, onclick: () => openDetail(row.id) },
      row.cells.name));
}

function drawPredictions(view) {
  if (!view.predictions.length) {
    fill(el.predictions, h("p", { class: "hint" }, words.no_predictions));
    return;
  }
  fill(el.predictions, view.predictions.map((p) => h("article", { class: "cl-prediction" },
    h("h3", null, p.title),
    h("p", { class: "hint" }, p.words.text),
    p.groups.map((g) => h("div", { class: "cl-group" },
      h("h4", null, g.label),
      h("ul", { class: "cl-bars" }, g.bars.map((b) => h("li", null,
        h("span", { class: "cl-bar-label" }, b.label),
        h("meter", { min: 0, max: 1, value: b.fraction, "aria-label": b.label }),
        h("span", { class: "cl-bar-count" }, b.text)))))))));
}

// --- one learner's record and the snapshot ----------------------------------------------

async function openDetail(id, focus = true) {
  if (ui.detail !== id) ui.detailMark = "";
  ui.detail = id;
  let record;
  try {
    record = await getJSON(`${API}/learners/${id}`);
  } catch (error) {
    lines(el.error, error instanceof ApiError ? error.messages : [pageWords().http.failed]);
    return;
  }
  el.detail.hidden = false;
  text(el.detailWords, record.words.text);
  fill(el.detailLines, record.lines.map((line) => h("li", null,
    h("span", { class: "cl-at" }, line.at), " ",
    line.pick
      ? h("label", null, h("input", { type: "checkbox", "data-seq": line.seq, checked: ui.picks.includes(line.seq),
        "aria-label": line.pick, onchange: (e) => {
          ui.picks = e.target.checked ? [...ui.picks, line.seq] : ui.picks.filter((s) => s !== line.seq);
        } }), " ", line.text)
      : line.text)));
  if (focus) el.detail.focus();
}

function drawRoom(view) {
  const snap = view.snapshot;
  el.room.hidden = !snap;
  if (!snap) return;
  text(el.roomWords, snap.words.text);
  fill(el.cards, snap.cards.map((c) => h("figure", { class: "cl-card" },
    h("figcaption", null, c.label), h("p", { class: "cl-card-title" }, c.title), h("p", { class: "cl-card-answer" }, c.answer))));
}

// --- the view ------------------------------------------------------------------------------

function draw() {
  const view = ui.view;
  if (!view) return;
  text(el.status, view.status.text);
  text(el.summary, view.summary.text);
  text(el.pause, view.state.paused ? words.resume : words.pause);
  el.pause.setAttribute("aria-pressed", String(view.state.paused));
  el.anonymise.checked = view.state.anonymised;
  text(el.paceNow, view.pace.text);
  const paceMark = view.state.pace.join(" ");
  if (paceMark !== ui.paceMark) {
    ui.paceMark = paceMark;
    for (const box of el.places.querySelectorAll("input")) box.checked = view.state.pace.includes(box.value);
  }
  text(el.pushed, view.pushed ? view.pushed.text : "");
  for (const b of document.querySelectorAll("#cl-controls button:not(#cl-delete)")) b.disabled = view.state.ended;
  drawLearners(view);
  drawTable(el.challenges, "challenges", view.challenges, (row) => row.cells.title);
  drawPredictions(view);
  drawRoom(view);
  const row = view.learners.rows.find((r) => r.id === ui.detail);
  const mark = row ? JSON.stringify([row.sort, row.cells.name]) : "";
  if (ui.detail !== null && !el.detail.hidden && mark !== ui.detailMark) {
    ui.detailMark = mark;
    openDetail(ui.detail, false);
  }
}

function mountControls() {
  fill(el.places, words.places.map((p) => h("label", { class: "cl-check" },
    h("input", { type: "checkbox", value: p.id }), " ", p.name)));
  fill(el.challenge, words.challenges.map((c) => h("option", { value: c.id }, c.title)));
  el.pause.addEventListener("click", () => act("pause", { paused: !(ui.view && ui.view.state.paused) }));
  el.anonymise.addEventListener("change", () => act("anonymise", { anonymised: el.anonymise.checked }));
  byId("cl-pace-apply").addEventListener("click", () => act("pace", {
    places: [...el.places.querySelectorAll("input:checked")].map((b) => b.value) }));
  byId("cl-pace-clear").addEventListener("click", () => act("pace", { places: [] }));
  byId("cl-push-link-go").addEventListener("click", () => act("push", { link: el.link.value }, el.pushError));
  byId("cl-push-challenge-go").addEventListener("click", () => act("push", { challenge: el.challenge.value }, el.pushError));
  byId("cl-push-clear").addEventListener("click", () => act("push", {}, el.pushError));
  byId("cl-snap-show").addEventListener("click", () => act("snapshot", { events: ui.picks }));
  byId("cl-snap-clear").addEventListener("click", () => {
    ui.picks = [];
    act("snapshot", { events: [] });
  });
  byId("cl-end").addEventListener("click", () => {
    if (confirm(words.confirm_end)) act("end", {});
  });
  byId("cl-delete").addEventListener("click", async () => {
    if (!confirm(words.confirm_delete) || !ui.view) return;
    if (await act("delete", { confirm: ui.view.name })) deleted();
  });
  el.filter.addEventListener("input", () => {
    ui.filter = el.filter.value;
    draw();
  });
  el.big.addEventListener("click", () => {
    const on = document.body.classList.toggle("cl-big");
    el.big.setAttribute("aria-pressed", String(on));
  });
}

function deleted() {
  text(el.status, words.deleted);
  for (const b of document.querySelectorAll("#main button, #main input, #main select")) b.disabled = true;
  socket.close();
}

mountControls();
const socket = live(`${API}/ws`, {
  onMessage: (message) => {
    if (message.type === "deleted") deleted();
    if (message.type !== "view") return;
    ui.view = message.view;
    draw();
  },
  onStatus: (open) => text(el.live, open ? words.live : words.reconnecting),
});
