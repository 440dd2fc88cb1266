// One request in flight at a time, the newest waits. A drag asks sixty times a second and
// the server answers each in its own time: asks made while one is on its way collapse into
// one (`merge`: by default the newer replaces the older) and go when the answer is in, so a
// slow answer never queues stale states. The explorer, the block and the connection labs
// each hold one of these.
//
//   const line = newest({
//     send(job),               // a promise of the answer (rejects with the error)
//     take(job, answer, error) // one of the two is set; return false to stop (offline)
//     merge(older, newer),     // optional: what waits when a second ask comes
//     split(job),              // optional: [now, later] (later waits, or null)
//     changed(),               // optional: called whenever line.busy() may have changed
//   });
//   line.ask(job); line.busy(); line.waiting(); await line.idle();
//   line.keep(job);   // after a stop: job waits (unless a newer ask does) for line.resume()

export function newest({ send, take, merge = (_older, newer) => newer, split = (job) => [job, null], changed = () => {} }) {
  let inFlight = false;
  let running = false;
  let waiting = null;
  let hasWaiting = false;
  let idlers = [];

  function wait(job) {
    waiting = hasWaiting ? merge(waiting, job) : job;
    hasWaiting = true;
  }

  async function pump() {
    running = true;
    while (hasWaiting) {
      const [now, later] = split(waiting);
      hasWaiting = false;
      waiting = null;
      if (later !== null) wait(later);
      inFlight = true;
      changed();
      let answer = null;
      let error = null;
      try {
        answer = await send(now);
      } catch (caught) {
        error = caught;
      }
      inFlight = false;
      const goOn = take(now, answer, error);
      changed();
      if (goOn === false) break;
    }
    running = false;
    const waiters = idlers;
    idlers = [];
    for (const resolve of waiters) resolve();
  }

  return {
    /** Send `job` now, or let it wait (merged into what waits) until the answer in flight is in. */
    ask(job) {
      wait(job);
      if (!running) pump();
      else changed();
    },
    /** Whether a request is on its way or waits. */
    busy: () => inFlight || hasWaiting,
    /** The job that waits, or null. */
    waiting: () => (hasWaiting ? waiting : null),
    /** Resolves once nothing is on its way (after a stop too). */
    idle: () => (running ? new Promise((resolve) => idlers.push(resolve)) : Promise.resolve()),
    /** Keep `job` to send on resume() unless a newer one already waits (a stopped line's retry). */
    keep(job) {
      if (!hasWaiting) wait(job);
    },
    /** Send what waits, if the line is stopped. */
    resume() {
      if (hasWaiting && !running) pump();
    },
  };
}
