// The live token count under the text box: the cap said up front, then the
// text counted by the server's tokenizer for the chosen model (no model load),
// once the learner pauses typing. The server writes the message.
import { text } from "../shared/dom.js";
import { postJSON } from "../shared/http.js";

const COUNT_DEBOUNCE_MS = 250; // count once the learner pauses, not on every key

/**
 * @param {{text: HTMLTextAreaElement, model: HTMLSelectElement, count: HTMLElement}} els
 * @param {() => {cap: number, maxChars: number}} limits the chosen model's token cap and the character limit
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
      if (mine === ticket) text(els.count, `Could not count the tokens: ${error.message}`);
    }
  }

  return function updateCount() {
    const { cap, maxChars } = limits();
    const n = els.text.value.length;
    if (n > maxChars) {
      text(els.count, `${n} characters: over the ${maxChars}-character limit; the cap is ${cap} tokens`);
      els.count.classList.add("is-over");
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(countTokens, COUNT_DEBOUNCE_MS);
  };
}
