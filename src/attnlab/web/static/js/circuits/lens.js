// The logit lens at one position: each block's top 5 tokens and the answer's probability and
// rank, and the block where the model's final answer first becomes the top token, named. A job
// of the model worker; every string is the server's. drawLens only draws an answer: the LensView
// notebook widget (widgets/circuits.js) draws the kernel's with it.
import { byId, fill } from "../shared/dom.js";
import { setupNumbers } from "./numbers.js";
import { chips, said, table } from "./place.js";
import { panel, wire } from "./ablation.js";

/** Draw a lens answer (lab/circuits/lens.lens_view) into `out`. */
export function drawLens(out, v) {
  const rows = v.layers.map((l) => ({
    title: l.title, top: l.is_top, nums: [2, 3],
    cells: [l.label, chips(l.top, "", "p"), l.token_p_display, l.rank_display],
    hows: { 2: [l.how?.token_p, l.token_p] },
  }));
  fill(out, said(v.named, "ci-named"), said(v.lens_words), said(v.followed), table(v.columns, rows, v.label));
  out.dataset.first = String(v.named.claims.first_top1);
}

/** @param {{model: () => string, text: () => string, words: () => object}} page */
export function setupLens(page) {
  const els = panel("lens");
  const numbers = setupNumbers(els.out, "lens", page);
  const position = byId("ci-lens-position");
  wire(els, page, "/api/circuits/lens", () => ({ model: page.model(), text: page.text(), position: Number(position.value) }),
    (v) => {
      drawLens(els.out, v);
      numbers.drawn({ source: v.program_source });
    }, { position, text: byId("ci-text") });
}
