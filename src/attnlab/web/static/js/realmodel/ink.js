// How a share in [0, 1] becomes ink, and the legend that says so. Every
// heatmap on the Real model page uses this one scale, so one legend reads
// them all. The scale is a square root: a broad head spreads its attention
// thinly (51 keys at about 0.02 each), and a linear scale would draw it
// blank; sqrt(0.02) is 0.14, still visible. The legend shows the mapping with
// the server's marks and words (a head's or the model view's `legend`:
// lab/realmodel/heatmap.py).
import { h, s } from "../shared/dom.js";

const FLOOR = 0.04; // a share of 0 is drawn faintly, unlike a blocked cell

/** Opacity (0..1) of the ink for a share `w` in [0, 1]. */
export function ink(w) {
  const clamped = Math.min(1, Math.max(0, w));
  return FLOOR + (1 - FLOOR) * Math.sqrt(clamped);
}

// The --src-0 colour of lab.css as RGB, for canvas drawings (which cannot read CSS classes).
export const INK_RGB = [36, 80, 201];
export const BLOCKED_RGB = [231, 234, 239]; // --grid

/**
 * A colour legend: a swatch per mark, a hatched "blocked" swatch when the model is causal
 * (the server says so with `blocked_mark`), and the server's sentence on the scale.
 * @param {{marks: {share: number, text: string}[], blocked_mark: string, label: string, words: string}} words
 */
export function legend(words) {
  const size = 18;
  const n = words.marks.length;
  const swatches = words.marks.map((m, i) => [
    s("rect", {
      class: "rm-cell", x: i * 44 + 12, y: 2, width: size, height: size,
      "fill-opacity": String(ink(m.share)), "data-share": String(m.share),
    }),
    s("text", { class: "rm-legend-text", x: i * 44 + 12 + size / 2, y: size + 16 }, m.text),
  ]);
  const width = n * 44 + (words.blocked_mark ? 80 : 8);
  const extra = words.blocked_mark
    ? [
      s("rect", { class: "rm-cell is-blocked", x: n * 44 + 16, y: 2, width: size, height: size }),
      s("text", { class: "rm-legend-text", x: n * 44 + 16 + size / 2, y: size + 16 }, words.blocked_mark),
    ]
    : [];
  return h("div", { class: "rm-legend" },
    s("svg", {
      class: "rm-legend-svg", viewBox: `0 0 ${width} ${size + 22}`, width, height: size + 22,
      role: "img", "aria-label": words.label,
    }, swatches, extra),
    h("p", { class: "hint rm-legend-words" }, words.words));
}

/**
 * Put one legend just before `box` (a panel of thumbnails), replacing the one put there before.
 * @param {HTMLElement} box
 * @param {object} words the model view's legend (it says when thumbnails are binned)
 */
export function legendBefore(box, words) {
  const before = box.previousElementSibling;
  const fresh = h("div", { class: "rm-legend-box is-thumbs" }, legend(words));
  if (before?.classList.contains("is-thumbs")) before.replaceWith(fresh);
  else box.before(fresh);
}

/**
 * Which token labels to write when cells are `cell` px wide: every k-th one
 * (k so that labels are at least `room` px apart), plus the focused token.
 * @returns {(i: number) => boolean}
 */
export function labelEvery(cell, focus, room = 12) {
  const k = Math.max(1, Math.ceil(room / cell));
  const far = (i) => focus === null || focus === undefined || Math.abs(i - focus) >= k;
  return (i) => i === focus || (i % k === 0 && far(i));
}

/**
 * Paint a grid of shares into a canvas, one pixel per cell; return its data URL.
 * @param {(number|null)[][]} weights rows of shares as the API sent them; null = blocked
 */
export function sharesImage(weights) {
  const rows = weights.length;
  const cols = rows ? weights[0].length : 0;
  const canvas = document.createElement("canvas");
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(cols, rows);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const o = 4 * (i * cols + j);
      const w = weights[i][j];
      const rgb = w === null ? BLOCKED_RGB : inked(w);
      img.data[o] = rgb[0];
      img.data[o + 1] = rgb[1];
      img.data[o + 2] = rgb[2];
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  return canvas.toDataURL("image/png");
}

// ink over white paper, composed here so the image is opaque
function inked(w) {
  const a = ink(w);
  return [0, 1, 2].map((c) => Math.round(255 - a * (255 - INK_RGB[c])));
}
