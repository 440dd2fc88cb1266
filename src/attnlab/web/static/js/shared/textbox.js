// Text boxes without a layout. Label placement (plot.js placeLabels) needs the
// box of every label on every frame of a drag. SVG getBBox() forces a
// synchronous layout of the whole page, once per plot per frame, and that was
// most of a frame's cost. Here a box comes from the text's computed style (a
// style update only, no layout) and canvas measureText with the same font.
// One real getBBox per font and baseline, taken the first time that pair is
// seen, calibrates the box's top and height against the baseline and the
// width against canvas (SVG text may be shaped at a slightly different
// size). Boxes lean wide (WIDE) so an estimate never hides a real overlap.
// This is pixel layout of text, not maths of attention.

const ctx = document.createElement("canvas").getContext("2d");
const calibrated = new Map(); // font + baseline -> {top, height, ratio}
const widths = new Map(); // font + text -> canvas width
const WIDE = 1.03; // 3% wider than calibrated (shaping differs a little with the scale)
const SLACK = 0.75; // user units on every side (fallback glyphs such as − or → sit taller)
const SLACK_PER_HEIGHT = 0.06; // and at least this share of the text's height
const MAX_WIDTHS = 2000;

const styles = new WeakMap(); // svg -> {generation, map: kind of text -> font, anchor, baseline}

// The plots' scale changes with the window, and with it the shaped widths;
// a class on <body> (Present) may change fonts.
let generation = 0;
function forget() {
  calibrated.clear();
  generation += 1;
}
window.addEventListener("resize", forget);
if (document.body) new MutationObserver(forget).observe(document.body, { attributeFilter: ["class"] });

/**
 * The font, anchor and baseline of `t`, read from its computed style once per
 * plot and kind of text (class and attributes), not per frame: a computed
 * style read after a redraw forces a style update.
 */
function styleOf(t) {
  const svg = t.ownerSVGElement || t;
  let entry = styles.get(svg);
  if (!entry || entry.generation !== generation) {
    entry = { generation, map: new Map() };
    styles.set(svg, entry);
  }
  const key = `${t.getAttribute("class")}|${t.getAttribute("text-anchor")}|${t.getAttribute("dominant-baseline")}`;
  let style = entry.map.get(key);
  if (!style) {
    const c = getComputedStyle(t);
    if (c.display === "none" || !c.fontSize) return null;
    style = {
      font: `${c.fontStyle} ${c.fontWeight} ${c.fontSize} ${c.fontFamily}`,
      anchor: c.textAnchor,
      baseline: c.dominantBaseline,
    };
    entry.map.set(key, style);
  }
  return style;
}

function canvasWidth(font, text) {
  const key = `${font}\n${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    if (widths.size > MAX_WIDTHS) widths.clear();
    ctx.font = font;
    w = ctx.measureText(text).width;
    widths.set(key, w);
  }
  return w;
}

/**
 * The box of SVG <text> `t` in its user units, {x, y, width, height}, as
 * getBBox() would give it (a little wider), or null when the text is not
 * rendered (in a closed disclosure) and no calibration exists yet.
 * Contract: `t` has one x and one y attribute and plain text content.
 * @param {SVGTextElement} t
 */
export function textBox(t) {
  const style = styleOf(t);
  if (!style) return null;
  const font = style.font;
  const key = `${font}|${style.baseline}`;
  const text = t.textContent;
  const x = Number(t.getAttribute("x")) || 0;
  const y = Number(t.getAttribute("y")) || 0;
  let cal = calibrated.get(key);
  if (!cal) {
    const real = t.getBBox(); // the one layout for this font and baseline
    const w = canvasWidth(font, text);
    if (!(real.width > 0) || !(w > 0)) return real.width > 0 ? real : null;
    cal = { top: real.y - y, height: real.height, ratio: real.width / w };
    calibrated.set(key, cal);
  }
  if (!text) return { x, y: y + cal.top, width: 0, height: cal.height };
  const width = canvasWidth(font, text) * cal.ratio * WIDE;
  const anchor = style.anchor;
  const left = anchor === "middle" ? x - width / 2 : anchor === "end" ? x - width : x;
  // the slack grows with the text: a larger font (Present) has taller fallback glyphs in user units too
  const slack = Math.max(SLACK, SLACK_PER_HEIGHT * cal.height);
  return { x: left - slack, y: y + cal.top - slack, width: width + 2 * slack, height: cal.height + 2 * slack };
}

/** The box of a mark (circle or rect) from its attributes: no layout. */
export function markBox(el) {
  const num = (name) => Number(el.getAttribute(name));
  if (el.tagName === "circle") {
    const [cx, cy, r] = [num("cx") || 0, num("cy") || 0, num("r")];
    return Number.isFinite(r) ? { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r } : el.getBBox();
  }
  const [x, y, width, height] = [num("x") || 0, num("y") || 0, num("width"), num("height")];
  return Number.isFinite(width) && Number.isFinite(height) ? { x, y, width, height } : el.getBBox();
}
