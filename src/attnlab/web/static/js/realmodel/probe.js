// "Repeat a random run": the standard probe for induction heads. The server
// draws the run (GET /api/models/probe: a fresh seed, the text and the note
// that names the seed); this puts the text in the box, says the note and
// traces it, so any model's induction heads can be found in one click.
import { byId, text } from "../shared/dom.js";
import { getJSON } from "../shared/http.js";

/**
 * Wire the button.
 * @param {HTMLTextAreaElement} box the text box the probe replaces
 * @param {() => Promise<void>} trace traces the box's text (the "Look inside" action)
 * @param {(message: string) => void} showError
 */
export function setupProbe(box, trace, showError) {
  const button = byId("rm-probe");
  const note = byId("rm-probe-note");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const probe = await getJSON("/api/models/probe");
      box.value = probe.text;
      box.dispatchEvent(new Event("input")); // the token count follows the new text
      text(note, probe.note.text);
      note.dataset.seed = String(probe.seed);
      await trace();
    } catch (error) {
      showError(error.message);
    } finally {
      button.disabled = false;
    }
  });
}
