// Export and import. JSON, the Markdown report, the notebook (.ipynb) and the
// SVG plots are made by the server from the held example and the study; the
// PNG is the server's SVG drawn onto a canvas here (drawing, not maths).
// Import sends a JSON file's text to the server, which validates it; a bad
// file gets its message and changes nothing.

import { text } from "./dom.js";
import { errorText, nbPost } from "./nbapi.js";
import { adoptView, getHeld, getNb, setMessage } from "./nbstate.js";

function save(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

async function fetchExport(path, withStudy = true) {
  const body = withStudy ? { held: getHeld(), study: getNb().study } : { held: getHeld() };
  const answer = await nbPost(path, body, true);
  if (!answer.ok) throw new Error(errorText(answer));
  return answer.body;
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

const EXPORTS = {
  json: async () => [new Blob([await fetchExport("export/json")], { type: "application/json" }), "attnlab-study.json"],
  markdown: async () => [new Blob([await fetchExport("export/markdown")], { type: "text/markdown" }), "attnlab-study.md"],
  ipynb: async () => [new Blob([await fetchExport("export/ipynb", false)], { type: "application/x-ipynb+json" }), "attnlab-worked-example.ipynb"],
  "key-svg": async () => [new Blob([await fetchExport("export/svg/key", false)], { type: "image/svg+xml" }), "attnlab-key-space.svg"],
  "value-svg": async () => [new Blob([await fetchExport("export/svg/value", false)], { type: "image/svg+xml" }), "attnlab-value-space.svg"],
  "key-png": async () => [await svgToPng(await fetchExport("export/svg/key", false)), "attnlab-key-space.png"],
  "value-png": async () => [await svgToPng(await fetchExport("export/svg/value", false)), "attnlab-value-space.png"],
};

export function mountExport(els) {
  for (const button of els.root.querySelectorAll("button[data-export]")) {
    button.addEventListener("click", async () => {
      const kind = button.dataset.export;
      try {
        const [blob, filename] = await EXPORTS[kind]();
        save(blob, filename);
        setMessage("export", `Saved ${filename}.`);
      } catch (error) {
        setMessage("export", `Export failed: ${error.message}`);
      }
      text(els.status, getNb().messages.export);
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
    if (content === null) return showImport("Import refused: the file could not be read. Nothing changed.", true);
    const answer = await nbPost("import", { text: content });
    if (!answer.ok) return showImport(`${errorText(answer)} Nothing changed.`, true);
    await adoptView(answer.body);
    showImport(`Imported ${file.name}: the held example now shows its numbers.`, false);
  });

  function showImport(message, bad) {
    text(els.importStatus, message);
    els.importStatus.classList.toggle("bad", bad);
  }
}
