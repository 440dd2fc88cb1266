// The live token count under the text box: the cap said up front, then the
// text counted by the server's tokenizer for the chosen model (no model load),
// once the learner pauses typing. The server writes every message (the count's, and the
// view's templates for a text over the character limit and a count that failed).
import { text } from "../shared/dom.js";
import { postJSON } from "../shared/http.js";
import { fillIn } from "./words.js";

const COUNT_DEBOUNCE_MS = 250; // count once the learner pauses, not on every key

/**
 * @param {{text: HTMLTextAreaElement, model: HTMLSelectElement, count: HTMLElement}} els
 * @param {() => {cap: number, maxChars: number, words: Record<string, string>}} limits the chosen model's
 *   token cap, the character limit and the view's templates (GET /api/models' words)
 * @returns {() => void} call on every edit and model change
 */
export function setupCount(els, limits) {
  let timer = 0;
  let ticket = 0;

  async function countTokens() {
    const mine = ++ticket;
    const model = els.model.value;
    try {
      const answer = await postJSON(`/api/models/${encodeURIComponent(model)}/tokens`, { text: els.text.value });
      if (mine !== ticket) return; // the learner typed on meanwhile
      text(els.count, answer.message);
      els.count.classList.toggle("is-over", !answer.fits);
      els.count.dataset.count = String(answer.count);
    } catch (error) {
      if (mine === ticket) text(els.count, fillIn(limits().words.count_failed, { message: error.message }));
    }
  }

  return function updateCount() {
    const { cap, maxChars, words } = limits();
    const n = els.text.value.length;
    if (n > maxChars) {
      text(els.count, fillIn(words.over_chars, { chars: n, max_chars: maxChars, cap }));
      els.count.classList.add("is-over");
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(countTokens, COUNT_DEBOUNCE_MS);
  };
}
