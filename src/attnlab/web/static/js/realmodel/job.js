// A trace job, and the views of the trace it keeps. trace() posts a text (waiting its
// turn while the server's line is full), polls the job's status line until it is done
// and hands the finished job to the page. keptJSON() fetches a view of a kept trace;
// when the server has dropped that trace to make room (410 trace_dropped, with the
// page's note), it traces the same text again, saying so with the note, and the
// view's request is abandoned (it never settles): the fresh trace redraws every view.
// This is the one place a dropped trace is handled, for every view of the page.
import { text } from "../shared/dom.js";
import { ApiError, getJSON, postJSONInTurn } from "../shared/http.js";
import { fillIn } from "./words.js";

const POLL_MS = 150;

let page = null; // the hooks setupJob was given
let asked = null; // the {model, text} of the trace shown: traced again if the server drops it
let running = false;

/**
 * Wire the job to the page.
 * @param {{status: HTMLElement, progress: HTMLProgressElement, words: () => Record<string, string>,
 *   busy: (on: boolean) => void, done: (job: object) => Promise<void>, failed: (error: Error) => void}} hooks
 *   status and progress: the job's line and bar; words(): the view's words (GET /api/models);
 *   busy(on): a trace starts or ends; done(job): draw the finished job (JobOut); failed(error): say why not
 */
export function setupJob(hooks) {
  page = hooks;
}

/**
 * Trace `request` ({model, text}); `note`: the server's sentence said before the done line (a re-trace).
 * @returns {Promise<void>} settles when the trace is drawn, or its failure said
 */
export async function trace(request, note = "") {
  running = true;
  page.busy(true);
  try {
    const waiting = (message, seconds) => text(page.status, fillIn(page.words().retry, { message, seconds }));
    let job = await postJSONInTurn("/api/models/jobs", request, waiting);
    asked = request;
    for (;;) {
      page.progress.value = job.progress;
      if (job.status === "done") break;
      if (job.status === "error" || job.status === "cancelled") throw new Error(job.message);
      text(page.status, job.stage_display); // the server's words, never "layer 31 of 30"
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      job = await getJSON(`/api/models/jobs/${encodeURIComponent(job.id)}`);
    }
    text(page.status, note ? fillIn(page.words().retraced, { note, done: job.done.text }) : job.done.text);
    await page.done(job);
  } catch (error) {
    page.failed(error);
  } finally {
    running = false;
    page.busy(false);
  }
}

/**
 * GET a view of a kept trace: its answer, or an ApiError to show. A dropped trace (410) is traced
 * again (unless a trace is already under way, which will redraw the views) and the promise never settles.
 * @param {string} url
 */
export async function keptJSON(url) {
  try {
    return await getJSON(url);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 410 || !asked) throw error;
    if (!running) trace(asked, error.detail[0]?.note ?? "");
    return new Promise(() => {});
  }
}
