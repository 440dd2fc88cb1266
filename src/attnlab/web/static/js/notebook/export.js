// Export and import. JSON, the Markdown report and the notebook (.ipynb) are
// made by the server from the held example and the study. The plots are the
// page's own pictures: the Match and Mix SVGs serialised with their computed
// colours, widths and fonts copied onto each element as attributes, so the
// file stands alone and shows exactly what the page shows (one drawing
// source). The PNG is that SVG drawn onto a canvas (drawing, not maths).
// Import sends a JSON file's text (and its name, for the words) to the server,
// which validates it; a bad file gets its message and changes nothing. Every
// word is the lab's: the answers' and the page's (pageWords().export).

import { lines, text } from "../shared/dom.js";
import { download } from "../shared/download.js";
import { ApiError, postJSON } from "../shared/http.js";
import { pageWords } from "../shared/words.js";
import { adoptStudy, adoptView, getHeld, getNb, setMessage } from "./state.js";

// An edit just typed may still be on its way to the server (<html data-attnlab-pending="1">):
// export the state it makes, not the one before it (waiting at most 5 s).
async function settledNumbers() {
  for (let waited = 0; document.documentElement.dataset.attnlabPending === "1" && waited < 5000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function fetchExport(path, withStudy = true) {
  await settledNumbers();
  const body = withStudy ? { held: getHeld(), study: getNb().study } : { held: getHeld() };
  return postJSON(`/api/notebook/${path}`, body, { text: true });
}

function utf8Base64(textValue) {
  const bytes = new TextEncoder().encode(textValue);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Draw an SVG document onto a canvas at twice its size and resolve to a PNG blob. */
function svgToPng(svgText) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth * 2;
      canvas.height = img.naturalHeight * 2;
      const ctx = canvas.getContext("2d");
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("PNG encoding failed"))), "image/png");
    };
    img.onerror = () => reject(new Error("the SVG could not be drawn"));
    img.src = `data:image/svg+xml;base64,${utf8Base64(svgText)}`;
  });
}

// The computed properties that make a page SVG look as it does without lab.css.
const STYLE_PROPS = [
  "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
  "stroke-linecap", "opacity", "paint-order", "font-size", "font-family", "font-weight",
  "text-anchor", "dominant-baseline",
];
// Page-only attributes (focus, roles, ids, data for tests) left out of the file; classes
// stay as names (the file has no stylesheet) so a reader can tell the marks apart.
const DROP = ["tabindex", "role", "aria-roledescription", "aria-describedby", "aria-labelledby", "id"];

/**
 * Serialise the page's SVG `svg` as a standalone document titled `title` and described
 * by `description`: computed styles inlined, a white background, and a viewBox grown to
 * the drawn content so no label is cropped.
 */
export function standaloneSvg(svg, title, description = "") {
  const clone = svg.cloneNode(true);
  const from = [svg, ...svg.querySelectorAll("*")];
  const to = [clone, ...clone.querySelectorAll("*")];
  from.forEach((el, i) => {
    const target = to[i];
    const style = getComputedStyle(el);
    if (el !== svg && !(el instanceof SVGDefsElement) && !el.closest("defs")) {
      for (const prop of STYLE_PROPS) {
        const value = style.getPropertyValue(prop);
        if (value) target.setAttribute(prop, value);
      }
    }
    for (const name of DROP) target.removeAttribute(name);
    for (const name of Object.keys(el.dataset || {})) target.removeAttribute(`data-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  });
  const vb = svg.viewBox.baseVal;
  const box = svg.getBBox();
  const x0 = Math.floor(Math.min(vb.x, box.x) - 4);
  const y0 = Math.floor(Math.min(vb.y, box.y) - 4);
  const x1 = Math.ceil(Math.max(vb.x + vb.width, box.x + box.width) + 4);
  const y1 = Math.ceil(Math.max(vb.y + vb.height, box.y + box.height) + 4);
  const [w, h] = [x1 - x0, y1 - y0];
  clone.setAttribute("viewBox", `${x0} ${y0} ${w} ${h}`);
  clone.setAttribute("width", String(w * 2));
  clone.setAttribute("height", String(h * 2));
  clone.setAttribute("role", "img");
  const ns = "http://www.w3.org/2000/svg";
  const bg = document.createElementNS(ns, "rect");
  for (const [k, v] of Object.entries({ x: x0, y: y0, width: w, height: h, fill: "#ffffff" })) bg.setAttribute(k, String(v));
  const titleEl = document.createElementNS(ns, "title");
  titleEl.textContent = title;
  const descEl = document.createElementNS(ns, "desc");
  descEl.textContent = description;
  clone.prepend(titleEl, descEl, bg);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(clone)}\n`;
}

/** The page's SVG `id` as a file: the lab's title for it, described by the query caption's words. */
function pageSvg(id, title) {
  const caption = document.getElementById("query-caption");
  return standaloneSvg(document.getElementById(id), title, caption ? caption.textContent : "");
}

const keySvg = () => pageSvg("match-plot", pageWords().export.titles.key);
const valueSvg = () => pageSvg("mix-plot", pageWords().export.titles.value);

// Each export's content, by kind; its file's name and words are the lab's (pageWords().export.files).
const EXPORTS = {
  json: async () => new Blob([await fetchExport("export/json")], { type: "application/json" }),
  markdown: async () => new Blob([await fetchExport("export/markdown")], { type: "text/markdown" }),
  ipynb: async () => new Blob([await fetchExport("export/ipynb", false)], { type: "application/x-ipynb+json" }),
  "key-svg": async () => new Blob([keySvg()], { type: "image/svg+xml" }),
  "value-svg": async () => new Blob([valueSvg()], { type: "image/svg+xml" }),
  "key-png": async () => svgToPng(keySvg()),
  "value-png": async () => svgToPng(valueSvg()),
};

export function mountExport(els) {
  const words = pageWords().export;
  for (const button of els.root.querySelectorAll("button[data-export]")) {
    button.addEventListener("click", async () => {
      const file = words.files[button.dataset.export];
      try {
        download(await EXPORTS[button.dataset.export](), null, file.name);
        setMessage("export", [file.saved]);
      } catch (error) {
        setMessage("export", [words.failed, ...(error instanceof ApiError ? error.messages : [])]);
      }
      lines(els.status, getNb().messages.export);
    });
  }

  els.file.addEventListener("change", async () => {
    const file = els.file.files[0];
    if (!file) return;
    let content;
    try {
      content = await file.text();
    } catch {
      content = null;
    }
    els.file.value = "";
    if (content === null) return showImport([words.unreadable], true);
    let answer;
    try {
      answer = await postJSON("/api/notebook/import", { text: content, name: file.name.slice(0, 255) });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return showImport([...error.messages, words.nothing_changed], true);
    }
    await adoptView(answer);
    if (answer.study) await adoptStudy(answer.study, answer.history); // the file's attempts and help
    showImport([answer.message.text], false);
  });

  function showImport(messages, bad) {
    lines(els.importStatus, messages);
    els.importStatus.classList.toggle("bad", bad);
  }
}
