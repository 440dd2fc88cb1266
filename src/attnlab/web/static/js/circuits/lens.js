// The logit lens at one position: each block's top 5 tokens and the answer's probability and
// rank, and the block where the model's final answer first becomes the top token, named. A job
// of the model worker; every string is the server's.
import { byId, fill } from "../shared/dom.js";
import { chips, said, table } from "./place.js";
import { panel, wire } from "./ablation.js";

function draw(out, v) {
  const rows = v.layers.map((l) => ({
    title: l.title, top: l.is_top, cells: [l.label, chips(l.top), l.token_p_display, l.rank_display], nums: [2, 3],
  }));
  fill(out, said(v.named, "ci-named"), said(v.lens_words), said(v.followed), table(v.columns, rows, v.label));
  out.dataset.first = String(v.named.claims.first_top1);
}

/** @param {{model: () => string, text: () => string, words: () => object}} page */
export function setupLens(page) {
  const els = panel("lens");
  const position = byId("ci-lens-position");
  wire(els, page, "/api/circuits/lens", () => ({ model: page.model(), text: page.text(), position: Number(position.value) }),
    (v) => draw(els.out, v), { position, text: byId("ci-text") });
}
