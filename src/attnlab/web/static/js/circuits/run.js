// A circuits job (POST /api/circuits/<kind>, then GET /api/circuits/jobs/{id} until it ends):
// its progress bar and status line follow the server's numbers and words, a full line of jobs
// (429) is waited out, and cancel() asks the server to stop it (a sweep then ends with what
// it had done). The job's answer, once it ended, goes back to the caller.
import { text } from "../shared/dom.js";
import { getJSON, postJSON, postJSONInTurn } from "../shared/http.js";
import { fillIn } from "../realmodel/words.js";

const POLL_MS = 150;
const ENDED = ["done", "error", "cancelled"];

/**
 * Run a job and follow it.
 * @param {string} url the kind's route
 * @param {object} body the request
 * @param {{progress: HTMLProgressElement, status: HTMLElement, words: () => object,
 *   started?: (job: object) => void, update?: (job: object) => void}} ui
 * @returns {Promise<object>} the job's last answer (status done, error or cancelled)
 */
export async function runJob(url, body, ui) {
  const waiting = (message, seconds) => text(ui.status, fillIn(ui.words().retry, { message, seconds }));
  let job = await postJSONInTurn(url, body, waiting);
  ui.started?.(job);
  for (;;) {
    ui.progress.value = job.progress;
    text(ui.status, job.stage_display);
    ui.update?.(job);
    if (ENDED.includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    job = await getJSON(`/api/circuits/jobs/${encodeURIComponent(job.id)}`);
  }
}

/** Ask the server to stop job `id`; resolves to its answer (its status line says it is stopping). */
export function cancelJob(id) {
  return postJSON(`/api/circuits/jobs/${encodeURIComponent(id)}/cancel`, {});
}
