// "Make your own example": add or remove sources (1 to the lab's most, GET /api/limits),
// rename them, edit their keys and values (2-D, so the planes can draw them) and the
// scale, then "Use this example" hands it to loadExample (state.js); the server
// validates it and its messages land next to the field here. The form is mounted
// once; it is rebuilt only when a source is added or removed, and typing only
// updates the draft, so a redraw never loses a draft or the caret. Its words are
// the lab's: the page's (pageWords().own) and the limits' (sources_count).

import { h, fill, srcClass, text } from "../shared/dom.js";
import { getLimits } from "../shared/limits.js";
import { pageWords } from "../shared/words.js";
import { parseNumber } from "./fields.js";
import { loadExample } from "./example.js";
import { getExplorer, getState, subscribe } from "./state.js";

function fromExplorer() {
  const input = getExplorer();
  if (!input || input.q.length !== 2) return null;
  return {
    q: input.q.slice(),
    scale: input.scale === null || input.scale === undefined ? "" : String(input.scale),
    sources: input.labels.map((label, i) => ({
      label,
      key: input.keys[i].map(String),
      value: input.values[i].map(String),
    })),
  };
}

export function mountOwnExample(els) {
  let draft = null;
  let dirty = false;
  let limits = null; // GET /api/limits: the most sources, a name's longest, the count's words
  const words = pageWords().own;
  const errors = new Map(); // field path -> {span, input}

  function fieldEl(path, label, value, onInput, attrs = {}) {
    const id = `own-${path.replace(/[^a-z0-9]+/gi, "-").replace(/-$/, "")}`;
    const input = h("input", { id, type: "text", autocomplete: "off", spellcheck: "false", "data-own": path, "aria-describedby": `${id}-error`, ...attrs });
    input.value = value;
    input.addEventListener("input", () => {
      dirty = true;
      onInput(input.value);
    });
    const span = h("span", { id: `${id}-error`, class: "field-error", "data-own-error-for": path });
    errors.set(path, { span, input });
    return h("span", { class: "field" }, h("label", { for: id }, label), input, span);
  }

  function build() {
    errors.clear();
    const n = draft.sources.length;
    fill(
      els.sources,
      draft.sources.map((src, i) =>
        h(
          "fieldset",
          { class: ["own-source", srcClass(i)] },
          h("legend", null, words.sources[i].legend),
          fieldEl(`labels[${i}]`, words.name, src.label, (v) => (src.label = v), { maxlength: String(limits.max_label_length) }),
          words.key.map((name, j) => fieldEl(`keys[${i}][${j}]`, name, src.key[j], (v) => (src.key[j] = v), { inputmode: "decimal" })),
          words.value.map((name, j) => fieldEl(`values[${i}][${j}]`, name, src.value[j], (v) => (src.value[j] = v), { inputmode: "decimal" })),
          h("button", { type: "button", class: "own-remove", "data-remove": i, disabled: n <= limits.min_sources }, words.sources[i].remove),
        ),
      ),
    );
    els.scale.value = draft.scale;
    els.add.disabled = n >= limits.max_sources;
    text(els.count, limits.words.sources_count[n - limits.min_sources].text);
  }

  function sync() {
    const fresh = fromExplorer();
    if (!fresh || !limits) return;
    draft = fresh;
    dirty = false;
    build();
  }

  els.sources.addEventListener("click", (event) => {
    const button = event.target.closest("[data-remove]");
    if (!button || draft.sources.length <= limits.min_sources) return;
    draft.sources.splice(Number(button.dataset.remove), 1);
    dirty = true;
    build();
  });
  els.add.addEventListener("click", () => {
    if (draft.sources.length >= limits.max_sources) return;
    const used = new Set(draft.sources.map((s) => s.label));
    const label = words.names.find((c) => !used.has(c)); // one is always free: there are as many as sources
    draft.sources.push({ label, key: [...words.new.key], value: [...words.new.value] });
    dirty = true;
    build();
    errors.get(`labels[${draft.sources.length - 1}]`).input.focus();
  });
  els.scale.addEventListener("input", () => {
    dirty = true;
    draft.scale = els.scale.value;
  });

  function use() {
    let bad = false;
    const read = (path, raw) => {
      const parsed = parseNumber(raw);
      const slot = errors.get(path);
      text(slot.span, "error" in parsed ? parsed.error : "");
      if ("error" in parsed) bad = true;
      return parsed.value;
    };
    const keys = draft.sources.map((s, i) => s.key.map((raw, j) => read(`keys[${i}][${j}]`, raw)));
    const values = draft.sources.map((s, i) => s.value.map((raw, j) => read(`values[${i}][${j}]`, raw)));
    let scale = null;
    text(els.scaleError, "");
    if (draft.scale.trim() !== "") {
      const parsed = parseNumber(draft.scale);
      if ("error" in parsed) {
        text(els.scaleError, parsed.error);
        bad = true;
      } else scale = parsed.value;
    }
    if (bad) return;
    loadExample({ labels: draft.sources.map((s) => s.label), keys, values, q: draft.q, scale });
    dirty = false;
  }
  els.use.addEventListener("click", use);
  els.root.addEventListener("toggle", () => {
    if (els.root.open && (!draft || !dirty)) withLimits().then(sync, () => {}); // offline: the banner says so
  });

  // The server's messages for this form's fields, next to each field.
  subscribe((state) => {
    if (!draft) return;
    for (const [path, slot] of errors) {
      const message = state.fieldErrors[path] || "";
      // the server's words name the field as the page does, so which span shows them is remembered
      if (message || slot.fromServer) text(slot.span, message);
      slot.fromServer = Boolean(message);
    }
    const scaleMessage = state.fieldErrors.scale || "";
    if (scaleMessage || els.scaleError.dataset.fromServer) text(els.scaleError, scaleMessage);
    if (scaleMessage) els.scaleError.dataset.fromServer = "1";
    else delete els.scaleError.dataset.fromServer;
    if (!dirty && state.requested === state.input && els.root.open && !Object.keys(state.fieldErrors).length) {
      const fresh = fromExplorer();
      if (fresh && fresh.sources.length !== draft.sources.length) sync();
    }
  });
  /** The limits, asked once (again after a failure). */
  function withLimits() {
    return limits ? Promise.resolve(limits) : getLimits().then((answer) => (limits = answer));
  }
  withLimits().then(() => getState().result && sync(), () => {});
}
