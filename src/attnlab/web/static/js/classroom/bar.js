// The class bar, added by the server to a learner's lab pages while their class runs
// (web/classroom/recorder.py). It says which class they are in and whether the page is
// connected; shows what the teacher pushed (open it, keep working, or come back to one's
// own work); makes the page read-only while the room is paused and keeps it to the places
// the class is paced to; tells the server where the page is (for the teacher's view); and,
// after a reload, puts the learner's practice record back (GET /api/class/me: their own
// record, kept by the class). Every sentence comes from the server.

import { h, fill, text } from "../shared/dom.js";
import { getJSON } from "../shared/http.js";
import { live } from "./live.js";

const OWN_KEY = "attnlab.class.own"; // the learner's own page while they look at a pushed one
const SEEN_KEY = "attnlab.class.seen"; // the last push opened or set aside
const CHALLENGE_KEY = "attnlab.class.challenge"; // a pushed challenge to open once the page is drawn
const PING_MS = 15000;

const store = {
  get: (k) => { try { return sessionStorage.getItem(k); } catch { return null; } },
  set: (k, v) => { try { sessionStorage.setItem(k, v); } catch { /* storage off: nothing kept */ } },
  drop: (k) => { try { sessionStorage.removeItem(k); } catch { /* storage off */ } },
};

function samePage(href) {
  const url = new URL(href, location.href);
  return url.pathname === location.pathname && url.search === location.search;
}

function go(href) {
  const reload = samePage(href);
  location.href = href;
  if (reload) location.reload(); // a hash alone would not start the page from the new link
}

/** Open a pushed practice challenge once the notebook has drawn its list. */
function openChallenge(id, tries = 0) {
  const button = document.querySelector(`#challenge-${CSS.escape(id)} .challenge-open`);
  if (button) {
    store.drop(CHALLENGE_KEY);
    button.scrollIntoView({ block: "center" });
    button.click();
  } else if (tries < 100) {
    setTimeout(() => openChallenge(id, tries + 1), 100);
  }
}

async function start() {
  let me;
  try {
    me = await getJSON("/api/class/me");
  } catch {
    return;
  }
  if (!me.joined) return;
  const words = me.words;
  const who = h("p", { class: "class-who" }, me.in_class.text);
  const status = h("p", { class: "class-status", role: "status" });
  const notice = h("div", { class: "class-notice", "aria-live": "polite" });
  const actions = h("div", { class: "class-actions" });
  const bar = h("aside", { id: "class-bar", class: "class-bar", "aria-label": words.label }, who, status, notice, actions);
  document.body.prepend(bar);
  const sections = me.sections[location.pathname] || [];
  const pagePlace = me.places.find((p) => p.page === location.pathname && !p.section);

  if (location.pathname === "/" && me.studies.notebook) {
    const nb = await import("../notebook/state.js");
    nb.adoptStudy(me.studies.notebook.study, me.studies.notebook.history);
    bar.dataset.restored = "1";
  }
  const pending = store.get(CHALLENGE_KEY);
  if (pending && location.pathname === "/") openChallenge(pending);

  let socket = null;
  let at = null;

  function where() {
    let best = null;
    let bestArea = 0;
    for (const id of sections) {
      const el = document.getElementById(id);
      if (!el) continue;
      const r = el.getBoundingClientRect();
      const area = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0));
      if (area > bestArea) {
        best = id;
        bestArea = area;
      }
    }
    return { type: "where", page: location.pathname, section: best };
  }

  function report() {
    const now = where();
    if (at && at.section === now.section) return;
    at = now;
    if (socket) socket.send(now);
  }

  function readOnly(on) {
    for (const el of document.body.children) {
      if (el !== bar && el.tagName !== "SCRIPT") el.inert = on;
    }
    document.documentElement.classList.toggle("class-paused", on);
  }

  let last = null;
  setTimeout(() => {
    delete bar.dataset.restored;
    if (last) draw(last);
  }, 10000);

  function draw(state) {
    last = state;
    const lines = [];
    const buttons = [];
    const finished = state.ended || state.deleted;
    readOnly(Boolean(state.paused) && !finished);
    for (const id of sections) {
      const el = document.getElementById(id);
      if (!el) continue;
      const out = !finished && state.pace.length > 0 && !state.open.includes(id);
      el.inert = out || (Boolean(state.paused) && !finished);
      el.classList.toggle("class-out", out);
    }
    const main = document.getElementById("main");
    const pageOut = !finished && state.pace.length > 0 && pagePlace && !state.open.includes(pagePlace.id);
    if (main && pagePlace) main.inert = pageOut || (Boolean(state.paused) && !finished);
    document.documentElement.classList.toggle("class-out-page", Boolean(pageOut));
    if (state.deleted) lines.push(words.deleted);
    else if (state.ended) lines.push(words.ended);
    else {
      if (state.paused) lines.push(words.paused);
      if (state.paced) {
        lines.push(state.paced.text);
        for (const g of state.go) buttons.push(h("a", { href: g.href, class: "class-go" }, g.text));
      }
      const own = store.get(OWN_KEY);
      if (state.push && store.get(SEEN_KEY) !== String(state.push.id)) {
        lines.push(state.pushed.text);
        buttons.push(
          h("button", { type: "button", class: "class-open", onclick: () => {
            if (!own) store.set(OWN_KEY, location.href);
            store.set(SEEN_KEY, String(state.push.id));
            if (state.push.challenge) store.set(CHALLENGE_KEY, state.push.challenge);
            if (state.push.challenge && location.pathname === "/") {
              store.drop(OWN_KEY);
              draw(state);
              openChallenge(state.push.challenge);
            } else go(state.push.href);
          } }, words.open),
          h("button", { type: "button", class: "class-dismiss", onclick: () => {
            store.set(SEEN_KEY, String(state.push.id));
            draw(state);
          } }, words.dismiss),
        );
      }
      if (own) {
        buttons.push(h("button", { type: "button", class: "class-back", onclick: () => {
          store.drop(OWN_KEY);
          go(own);
        } }, words.back));
      }
    }
    if (bar.dataset.restored === "1") lines.push(words.restored);
    fill(notice, lines.map((line) => h("p", null, line)));
    fill(actions, buttons);
    bar.classList.toggle("class-alert", lines.length > 0);
    if (finished && socket) {
      socket.close();
      socket = null;
      text(status, "");
    }
  }

  socket = live("/api/class/ws", {
    onMessage: (message) => {
      if (message.type === "state") draw(message);
    },
    onStatus: (open) => {
      text(status, open ? words.connected : words.reconnecting);
      bar.dataset.connected = open ? "1" : "0";
    },
    onOpen: (send) => {
      at = where();
      send(at);
    },
  });
  addEventListener("scroll", () => requestAnimationFrame(report), { passive: true });
  setInterval(() => socket && socket.send({ type: "ping" }), PING_MS);
}

start();
