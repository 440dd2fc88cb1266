// The notebook's words below the demos: the core math (MathML made by the
// server from LaTeX), the key papers and the 17 connections. ("Why it matters"
// and "Questions to think about" sit above the explorer; the server writes
// them into the page itself, see web/assets.py.) MathML and
// prose are parsed as XML and imported node by node (no innerHTML), so text
// stays text; links get rel="noopener noreferrer". Every line is the lab's
// (lab/content.py: a paper's byline, the connections' count).

import { fill, h } from "../shared/dom.js";
import { getJSON } from "../shared/http.js";

const XHTML = "http://www.w3.org/1999/xhtml";

/** Parse server-made XHTML+MathML `markup` into nodes of this document. */
function nodes(markup) {
  const doc = new DOMParser().parseFromString(`<div xmlns="${XHTML}">${markup}</div>`, "application/xml");
  if (doc.getElementsByTagName("parsererror").length) return [markup.replace(/<[^>]*>/g, "")];
  return Array.from(doc.documentElement.childNodes, (n) => document.importNode(n, true));
}

function drawMath(el, math) {
  fill(
    el,
    h("h2", { id: "math-title" }, math.heading),
    h("p", { class: "hint" }, math.intro),
    math.blocks.map((b) => {
      if (b.kind === "heading") return h("h3", null, b.text);
      // tabindex: a wide equation scrolls sideways on a phone, and a scroll box must be reachable by keyboard.
      if (b.kind === "display") return h("div", { class: "math-block", tabindex: 0 }, nodes(b.html));
      return h("p", null, nodes(b.html));
    }),
  );
}

function drawPapers(el, papers) {
  fill(
    el,
    h("h2", { id: "papers-title" }, papers.heading),
    h(
      "ul",
      { class: "papers" },
      papers.items.map((p) =>
        h(
          "li",
          null,
          h("p", { class: "paper-title" }, p.title),
          h("p", { class: "hint" }, p.byline),
          h("a", { href: p.url, rel: "noopener noreferrer", "aria-label": p.link_label }, p.link),
        ),
      ),
    ),
  );
}

function drawConnections(el, connections, inAttnlab) {
  fill(
    el,
    h("h2", { id: "connections-title" }, connections.heading),
    h("h3", null, connections.count_heading.text),
    connections.groups.map((g) =>
      h(
        "section",
        { class: "connection-group" },
        h("h4", null, g.question),
        h(
          "ul",
          null,
          g.items.map((item) =>
            h(
              "li",
              { class: "connection" },
              h("p", null, h("strong", null, item.heading), " ", item.relation_sentence,
                item.open ? [" ", h("a", { class: "connection-open", href: item.open.href }, item.open.text)] : null),
              h("p", null, item.text),
              item.attnlab ? h("p", { class: "in-attnlab" }, h("strong", null, inAttnlab), " ", item.attnlab) : null,
            ),
          ),
        ),
      ),
    ),
  );
}

/** Fetch the content once and draw the sections below the demos. */
export async function mountContent(els) {
  let c;
  try {
    c = await getJSON("/api/notebook/content");
  } catch {
    return; // the sections below the demos stay empty; the explorer's banner says when offline
  }
  drawMath(els.math, c.math);
  drawPapers(els.papers, c.papers);
  drawConnections(els.connections, c.connections, c.in_attnlab);
  els.footer.textContent = c.footer;
}
