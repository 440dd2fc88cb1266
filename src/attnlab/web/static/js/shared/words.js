// The page's fixed words, written into the page by the server (web/assets.py, from the lab:
// lab/page.py, lab/explorer/page.py, lab/notebook/page.py) as a JSON data block,
// <script type="application/json" id="attnlab-words">, never run. A module places these
// and the answers' strings; it never writes a sentence of its own. Read once.

let words = null;

/** The page's words by module ({http, link, practice, ...}); {} where the page has none (a widget). */
export function pageWords() {
  if (!words) {
    const block = typeof document === "undefined" ? null : document.getElementById("attnlab-words");
    words = block ? JSON.parse(block.textContent) : {};
  }
  return words;
}
