// The phone strip. On a narrow screen the three steps are stacked, so while q
// is dragged Share and Mix would be off screen. This compact strip stays on
// screen (sticky at the bottom of the explorer; lab.css shows it at narrow
// widths only) with each source's share and the output, the strings the
// answer carries for it (lab/explorer/answer.py: "A 14%" as the Share table
// writes it, "o = [..]", and its pictures' names). While a drag lasts it moves to the screen edge away
// from the finger, so it never covers q, and adds the pie and the value plane,
// drawn by the panels' own functions from the same answer: it can never
// disagree with them.

import { h, s, srcClass, text } from "../shared/dom.js";
import { drawValuePlane } from "./mix.js";
import { drawPie } from "./share.js";

/** Mount the strip for `anchor` (the Match plot); returns {draw, show, hide}. */
export function mountStrip(anchor) {
  const shares = h("span", { class: "strip-shares" });
  const output = h("span", { class: "strip-output" });
  const pie = s("svg", { class: "mini-pie", role: "img" });
  const mix = s("svg", { class: "mini-mix", role: "img" });
  const mini = h("div", { class: "mini-view" }, pie, mix);
  // Hidden from assistive technology: it repeats the panels and the summary.
  // No id: a notebook may hold several.
  const el = h("div", { class: "phone-strip", "aria-hidden": "true" }, h("p", { class: "strip-numbers" }, shares, output), mini);
  (anchor.closest(".explorer") || document.body).append(el);
  let result = null;
  // On a wide screen the strip is display: none, and drawing its pictures would
  // only force layouts (label placement measures text) during every drag.
  const narrow = window.matchMedia("(max-width: 900px)");

  function drawNumbers() {
    const items = result.strip.shares;
    if (shares.children.length !== items.length) {
      shares.replaceChildren(...items.map((_, i) => h("span", { class: `strip-share ${srcClass(i)}` })));
    }
    items.forEach((item, i) => text(shares.children[i], item));
    text(output, result.strip.output);
    pie.setAttribute("aria-label", result.strip.pie);
    mix.setAttribute("aria-label", result.strip.mix);
  }

  function paint() {
    if (!result || !mini.classList.contains("shown") || !narrow.matches) return;
    drawPie(pie, result);
    drawValuePlane(mix, result, "mini", { arrows: true });
  }

  return {
    draw(next) {
      result = next;
      if (result.strip) drawNumbers();
      paint();
    },
    /** Drag started: pin the strip to the half of the screen the pointer at `clientY` is not on. */
    show(clientY) {
      const top = clientY > window.innerHeight / 2;
      el.classList.toggle("at-top", top);
      el.classList.toggle("at-bottom", !top);
      el.classList.add("dragging");
      mini.classList.add("shown");
      paint();
    },
    hide() {
      el.classList.remove("dragging", "at-top", "at-bottom");
      mini.classList.remove("shown");
    },
  };
}
