// The join page: a nickname in, the class's cookie back (POST /api/class/join), then on to
// the lab. A learner already in the class (their cookie) is told so and offered the way on.
// Every sentence is the server's: the page's words block, or the answer's.

import { byId, lines, text } from "../shared/dom.js";
import { ApiError, getJSON, postJSON } from "../shared/http.js";
import { pageWords } from "../shared/words.js";

const words = pageWords().classroom;
const form = byId("join-form");
const input = byId("nickname");
const error = byId("join-error");
const done = byId("join-done");
const next = byId("join-next");
const link = byId("join-continue");
const button = byId("join");

function joined(sentence, href) {
  form.hidden = true;
  text(done, sentence);
  done.hidden = false;
  link.href = href;
  text(link, words.continue);
  next.hidden = false;
  link.focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  button.disabled = true;
  lines(error, [words.joining]);
  try {
    const answer = await postJSON("/api/class/join", { nickname: input.value });
    lines(error, []);
    joined(answer.words.text, answer.next);
    location.assign(answer.next);
  } catch (e) {
    lines(error, e instanceof ApiError ? e.messages : [words.offline]);
    input.setAttribute("aria-invalid", "true");
    input.focus();
  } finally {
    button.disabled = false;
  }
});

getJSON("/api/class/me")
  .then((me) => {
    if (me.joined) joined(me.in_class.text, "/");
  })
  .catch(() => {});
