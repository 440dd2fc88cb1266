// The model picker: the shipped models, then those the server found on its computer (the Hugging
// Face cache, the models folder), each as the server words it; the files it skipped, with why; and,
// for the chosen model, what its own files say (GET /api/models/about): its note (kind, shapes, the
// tokens it reads, what its products run on once loaded), its token cap, and which model writes and
// whether it has a chat. The server writes every word; this module only places them.
import { byId, fill, h, text } from "../shared/dom.js";
import { getJSON } from "../shared/http.js";
import { fillIn } from "./words.js";

/**
 * @param {{model: HTMLSelectElement, modelNote: HTMLElement}} els
 * @param {() => Record<string, string>} words the view's templates (GET /api/models' words)
 * @param {(about: object | null) => void} chosen called with the chosen model's answer (null: unreadable)
 */
export function setupModels(els, words, chosen) {
  let ticket = 0; // only the newest model's answer is drawn

  /** Fill the picker (GET /api/models): grouped as the server groups them, each option its text. */
  function fillModels(info) {
    const option = (m) => h("option", { value: m.name, title: m.line.text }, m.option);
    const groups = Object.entries(info.groups).map(([group, label]) => {
      const members = info.models.filter((m) => m.group === group);
      return members.length ? h("optgroup", { label }, members.map(option)) : null;
    });
    const value = els.model.value;
    fill(els.model, groups);
    if (value && info.models.some((m) => m.name === value)) els.model.value = value;
    text(byId("rm-skipped-title"), info.skipped_title);
    fill(byId("rm-skipped-list"), info.skipped.map((s) => h("li", {}, s.text)));
    byId("rm-skipped").hidden = info.skipped.length === 0;
    text(byId("rm-searched"), info.searched.text);
  }

  /** Ask what the chosen model's files say, and show its note. */
  async function about() {
    const name = els.model.value;
    if (!name) return;
    const mine = ++ticket;
    try {
      const answer = await getJSON(`/api/models/about?${new URLSearchParams({ model: name })}`);
      if (mine !== ticket) return; // another model was chosen meanwhile
      text(els.modelNote, answer.note);
      chosen(answer);
    } catch (error) {
      if (mine !== ticket) return;
      text(els.modelNote, fillIn(words().about_failed, { message: error.message }));
      chosen(null);
    }
  }

  return { fillModels, about };
}
