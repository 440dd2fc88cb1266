// The lab's templates filled in: the server writes every word (GET /api/models' `words`,
// a trace's `row_title`), and the page substitutes only what it holds, a number it counted
// or a string the server sent, for a template's {slot}. A slot it was not given stays as
// written, so a template and its caller that drift apart show it.

/**
 * @param {string|undefined} template e.g. "{message} Trying again in {seconds} s…"
 * @param {Record<string, string|number>} slots
 * @returns {string} "" while the template has not arrived (the page's first request)
 */
export function fillIn(template, slots) {
  return (template ?? "").replace(/\{(\w+)\}/g, (whole, name) => (name in slots ? String(slots[name]) : whole));
}
