// The notebook widgets' entry module (anywidget's _esm): a loader with no
// imports of its own, since the host loads it from a Blob URL where "./x.js"
// means nothing. Python sends, in the `_modules` trait, the page modules a
// view needs as [name, source] pairs, dependencies first, each named by its
// path under web/static/js ("explorer/match.js"); each becomes a Blob URL
// whose relative imports ("./mix.js", "../shared/dom.js") point at the Blob
// URLs made before it, so the page's modules run unchanged and nothing is
// fetched. The view module (`_attnlab_view`) exports mount(el, model) and
// returns a cleanup function.
// A standalone snapshot (widget.to_html) calls the same render() with a
// frozen model. No numbers are computed here.

const IMPORT = /(\bfrom\s*|\bimport\s*)(["'])(\.\.?\/[\w./-]+\.js)\2/g;
// source text -> Blob URL, shared by every widget on the page: the host loads this entry module
// afresh for each widget (a Blob URL of its own), so the map lives on the window, and a page
// module runs once for all the widgets (its per-widget id counter counts them all).
const made = typeof window !== "undefined" ? (window.attnlabModules ??= new Map()) : new Map();

/** The module path that `specifier` ("./x.js", "../shared/x.js") names from module `name`. */
function resolve(name, specifier) {
  const parts = name.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

function urlFor(name, source, urls) {
  const code = source.replace(IMPORT, (whole, head, quote, specifier) => {
    const dep = resolve(name, specifier);
    if (!urls[dep]) throw new Error(`attnlab widget: ${name} imports ${dep}, which was not sent`);
    return `${head}${quote}${urls[dep]}${quote}`;
  });
  if (!made.has(code)) made.set(code, URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
  return made.get(code);
}

/** Blob URLs for [[name, source], ...] (dependencies first), by name. */
function load(modules) {
  const urls = {};
  for (const [name, source] of modules) urls[name] = urlFor(name, source, urls);
  return urls;
}

// Notebook 7 (unlike JupyterLab) runs its keyboard shortcuts in the capture phase
// on document, and a command-mode binding matches any focused element in the
// notebook (".jp-mod-commandMode :focus"): it would take the arrow keys meant for
// q's handle or the token bar before they reach them. Lumino skips shortcuts for
// a target carrying data-lm-suppress-shortcuts, and window's capture phase runs
// before document's: mark a focused element inside a widget there, once per page.
function keepKeys(event) {
  const target = event.target;
  if (target instanceof Element && target.closest(".attnlab-widget")) {
    target.setAttribute("data-lm-suppress-shortcuts", "true");
  }
}
if (typeof window !== "undefined" && !window.attnlabKeepKeys) {
  window.attnlabKeepKeys = true;
  window.addEventListener("keydown", keepKeys, true);
}

async function render({ model, el }) {
  const urls = load(model.get("_modules"));
  const view = await import(urls[model.get("_attnlab_view")]);
  el.classList.add("attnlab-widget");
  return view.mount(el, model);
}

export default { render };
