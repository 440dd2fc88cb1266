// Phone: while q is dragged the three panels are stacked, so Share and Mix
// would be off screen. This compact strip repeats the pie and the value
// plane, fixed to the screen edge away from the finger, only while a drag
// lasts (CSS shows it at narrow widths only). It draws the same functions
// as the panels from the same answer, so it can never disagree with them.

import { h, s } from "../shared/dom.js";
import { drawValuePlane } from "./mix.js";
import { drawPie } from "./share.js";

/** Mount the strip next to `anchor` (the Match plot); returns {draw, show, hide}. */
export function mountMiniView(anchor) {
  const pie = s("svg", { class: "mini-pie", role: "img", "aria-label": "Shares while dragging" });
  const mix = s("svg", { class: "mini-mix", role: "img", "aria-label": "Output while dragging" });
  // Hidden from assistive technology: it repeats the panels below.
  const el = h("div", { class: "mini-view", "aria-hidden": "true" }, pie, mix); // no id: a notebook may hold several
  (anchor.closest(".explorer") || document.body).append(el);
  let result = null;
  // The strip is shown at narrow widths only (lab.css): on a wide screen it is
  // display: none, and drawing it would only force layouts (label placement
  // measures text) during every drag.
  const narrow = window.matchMedia("(max-width: 900px)");

  function paint() {
    if (!result || !el.classList.contains("shown") || !narrow.matches) return;
    drawPie(pie, result);
    drawValuePlane(mix, result, "mini", { arrows: true });
  }

  return {
    draw(next) {
      result = next;
      paint();
    },
    /** Show the strip on the half of the screen the pointer at `clientY` is not on. */
    show(clientY) {
      const top = clientY > window.innerHeight / 2;
      el.classList.toggle("at-top", top);
      el.classList.toggle("at-bottom", !top);
      el.classList.add("shown");
      paint();
    },
    hide() {
      el.classList.remove("shown");
    },
  };
}
