// "How is this computed?" on the Circuits page. Every number a view draws carries the server's
// descriptor of it (place.js's markNumber: its `how` in data-how, the value the view holds in
// data-value, both JSON as the server sent them). Under each view, realmodel/how.js's control
// shows the program behind the number picked there: a click on it, the arrow keys among the
// view's numbers (one Tab stop per view, the focused number picked), Enter on a map's cell
// (grid.js sends "ci-pick" from the cell), a ranked head's button. The program is asked for with
// the view's text (its `program_source`: POST /api/models/program) or, for the census, its kept
// trace. Nothing here writes a word or computes a number.
import { h } from "../shared/dom.js";
import { setupHow } from "../realmodel/how.js";

/** A number reached with the arrow keys (a map's cells have their own cursor; a button its own Tab stop). */
function roving(el) {
  return !(el instanceof SVGElement) && el.tagName !== "BUTTON";
}

const NEXT = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

/**
 * Give the view drawn into `out` its "How is this computed?" control (placed right after `out`).
 * @param {HTMLElement} out the view's output
 * @param {string} name the view ("census", "ablation", "attribution", "patching", "lens", "head")
 * @param {{words: () => object}} page
 * @returns {{drawn: (where: {source?: object, jobId?: string}) => void}} call `drawn` after each
 *   draw, with the text the view ran on (`source`: its program_source) or its kept trace (`jobId`)
 */
export function setupNumbers(out, name, page) {
  let where = null;
  let picked = null; // the element of the number picked
  const how = setupHow(null, () => {
    if (!where || !picked?.isConnected) return null;
    const number = JSON.parse(picked.getAttribute("data-how"));
    const value = picked.getAttribute("data-value");
    if (value !== null) number.value = JSON.parse(value);
    return { ...where, number };
  });
  const control = how.element;
  control.dataset.view = name;
  control.classList.add("ci-how");
  control.hidden = true;
  control.insertBefore(h("p", { class: "hint ci-how-pick" }, page.words().how_pick ?? ""), control.children[2]);
  out.after(control);

  const numbers = () => Array.from(out.querySelectorAll("[data-how]")).filter(roving);

  function pick(el) {
    if (el === picked) return;
    picked?.classList.remove("is-how");
    picked = el;
    el.classList.add("is-how");
    if (roving(el)) for (const n of numbers()) n.tabIndex = n === el ? 0 : -1;
    how.refresh();
  }

  out.addEventListener("click", (event) => {
    const el = event.target.closest?.("[data-how]");
    if (el && !(el instanceof SVGElement)) pick(el); // a map's cell: its "ci-pick"
  });
  out.addEventListener("ci-pick", (event) => pick(event.target));
  out.addEventListener("focusin", (event) => {
    if (event.target.matches?.("[data-how]") && roving(event.target)) pick(event.target);
  });
  out.addEventListener("keydown", (event) => {
    const el = event.target;
    if (!el.matches?.("[data-how]") || !roving(el)) return;
    const all = numbers();
    const at = all.indexOf(el);
    const to = event.key === "Home" ? 0 : event.key === "End" ? all.length - 1
      : event.key in NEXT ? Math.min(all.length - 1, Math.max(0, at + NEXT[event.key])) : null;
    if (to === null) return;
    event.preventDefault();
    all[to].focus();
  });

  return {
    drawn(at) {
      where = at;
      picked = null;
      const all = numbers();
      all.forEach((n, i) => { n.tabIndex = i === 0 ? 0 : -1; });
      const first = out.querySelector("[data-how]");
      control.hidden = first === null;
      if (first) pick(first);
    },
  };
}
