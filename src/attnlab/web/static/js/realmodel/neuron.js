// The neuron view in the explorer's terms: for (layer, head, query, key) the
// d_k coordinates of q and k as bars, their products, the ordered running sum,
// the scale and the score; then the row's softmax, the explorer's words and
// the honest 2-D plane (a projection; the server says what it leaves out).
// Every word and printed number is the server's (each bar's title at full precision).
// Numbers: GET /api/models/jobs/{id}/neuron/{layer}/{head}/{query}/{key}.
import { byId, fill, h, s } from "../shared/dom.js";
import { setupBridge } from "./bridge.js";
import { setupHow } from "./how.js";
import { keptJSON } from "./job.js";

const BAR_W = 6; // px per coordinate
const BAR_H = 34; // px from the axis to the largest bar

/**
 * One row of signed bars (q, k, products or the running sum); each says its number at full
 * precision on hover (`titles`: the server's, one per bar).
 */
function bars(values, { name, label, titles }, cls) {
  const top = Math.max(...values.map(Math.abs)) || 1;
  const width = values.length * BAR_W;
  return h("figure", { class: "rm-neuron-fig" },
    s("svg", { class: "rm-neuron-bars", viewBox: `0 0 ${width} ${2 * BAR_H}`, width, height: 2 * BAR_H, role: "img",
      "aria-label": label },
    s("line", { class: "rm-axis", x1: 0, y1: BAR_H, x2: width, y2: BAR_H }),
    values.map((v, d) => {
      const len = (Math.abs(v) / top) * BAR_H;
      return s("rect", { class: ["rm-bar", cls, v < 0 && "is-negative"], x: d * BAR_W, y: v >= 0 ? BAR_H - len : BAR_H,
        width: BAR_W - 1, height: Math.max(0.5, len), "data-d": d, "data-value": String(v) },
      s("title", {}, titles[d]));
    })),
    h("figcaption", {}, name));
}

/** The plane view: keys as points (x along q, y square to it), q as an arrow. */
function plane(p) {
  const pts = [p.q, ...p.keys.map((k) => [k.x, k.y])];
  const span = Math.max(...pts.flat().map(Math.abs)) || 1;
  const size = 240;
  const at = (x, y) => [size / 2 + (x / span) * (size / 2 - 14), size / 2 - (y / span) * (size / 2 - 14)];
  const [qx, qy] = at(p.q[0], p.q[1]);
  return h("figure", { class: "rm-neuron-fig" },
    s("svg", { class: "rm-plane", viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: "img",
      "aria-label": p.caption.text },
    s("line", { class: "rm-axis", x1: 0, y1: size / 2, x2: size, y2: size / 2 }),
    s("line", { class: "rm-axis", x1: size / 2, y1: 0, x2: size / 2, y2: size }),
    s("line", { class: "rm-plane-q", x1: size / 2, y1: size / 2, x2: qx, y2: qy }),
    p.keys.map((k) => {
      const [x, y] = at(k.x, k.y);
      return s("circle", { class: ["rm-plane-key", k.index === p.top_key && "is-top"], cx: x, cy: y, r: 3 + 6 * Math.sqrt(k.share),
        "data-index": k.index },
      s("title", {}, k.title));
    })),
    h("figcaption", {}, h("strong", {}, p.heading), " ", p.caption.text, " ", p.leaves_out.text));
}

const SERIES = { q: "is-q", k: "is-k", products: "is-product", running: "is-running" };

function draw(box, n) {
  const t = n.text;
  const series = Object.entries(SERIES).map(([key, cls]) =>
    bars(n[key], { name: t.bars[key], label: t.bar_labels[key], titles: t.bar_titles[key] }, cls));
  fill(box,
    h("h3", { id: "rm-neuron-title" }, t.title),
    t.blocked ? h("p", { class: "rm-error" }, t.blocked.text) : null,
    h("div", { class: "rm-neuron-scroll", tabindex: "0", role: "region", "aria-label": t.bars.region }, series),
    h("p", { class: "rm-neuron-sum", "data-value": n.score_display }, t.sum.text),
    h("p", { "data-words": "softmax" }, t.softmax.text),
    h("div", { class: "rm-words" }, ["summary", "match", "share", "mix"].map((w) => h("p", { "data-words": w }, n.words[w].text))),
    plane(n.plane));
}

/**
 * Wire the neuron panel and the bridge to the explorer; `getAt()` gives
 * {jobId, layer, head, query, labels} or null; `words()` the view's words (for the bridge).
 * @returns {{show: () => void}} call when the focused query, layer or head changes
 */
export function setupNeuron(getAt, words) {
  const panel = byId("rm-neuron");
  const key = byId("rm-neuron-key");
  const out = byId("rm-neuron-out");
  let ticket = 0;
  let labelsShown = null;
  let shown = null; // the neuron answer on screen
  let coordinates = { of: 0, options: [] }; // the picker's coordinates 0..d_k-1, made once per d_k
  // "How is this computed?" for this view's numbers: q, k, products, sums, the score, the row's softmax
  const how = setupHow("neuron", () => {
    const at = getAt();
    if (!at || !shown || shown.job !== at.jobId) return null; // nothing of this trace on screen yet
    if (coordinates.of !== shown.d_k) {
      coordinates = { of: shown.d_k, options: shown.q.map((_, d) => ({ value: d, label: String(d) })) };
    }
    return {
      jobId: at.jobId,
      fields: { layer: shown.layer, head: shown.head, query: shown.query, key: shown.key },
      pickers: { coordinate: { options: coordinates.options, value: null } },
      valueOf(choice, picked) { // the number this view holds for the choice, as the API sent it
        const d = Number(picked.coordinate);
        const r = shown.row;
        const held = { q: shown.q[d], k: shown.k[d], product: shown.products[d], running: shown.running[d],
          dot: shown.dot, score: shown.score, share: r.key_share, m: r.m, z: r.z };
        return held[choice];
      },
    };
  });
  panel.append(how.element);
  // the bridge ("Open this head in the explorer") follows the same focused query, layer and head
  const bridge = setupBridge(() => {
    const at = getAt();
    return at && { ...at, label: at.labels[at.query] };
  }, words);

  async function load() {
    const at = getAt();
    if (!at) return;
    const mine = ++ticket;
    const where = [at.layer, at.head, at.query, key.value].map(encodeURIComponent).join("/");
    try {
      const n = await keptJSON(`/api/models/jobs/${encodeURIComponent(at.jobId)}/neuron/${where}`);
      if (mine !== ticket) return;
      draw(out, n);
      shown = n;
      how.refresh();
    } catch (problem) {
      if (mine === ticket) fill(out, h("p", { class: "rm-error" }, problem.message));
    }
  }
  key.addEventListener("change", load);

  return {
    show() {
      const at = getAt();
      panel.hidden = !at;
      bridge.show();
      if (!at) return;
      if (labelsShown !== at.labels) {
        fill(key, at.labels.map((label, i) => h("option", { value: i }, label)));
        labelsShown = at.labels;
        key.value = "0";
      }
      load();
    },
  };
}
