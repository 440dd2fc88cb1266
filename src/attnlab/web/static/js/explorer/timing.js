// Pointer-to-screen timing for the benchmark (benchmarks/bench_lab.py) and
// the page's own performance entries.

/**
 * Measure each pointer move's latency once its numbers are drawn:
 * "attnlab:pointer-to-dom" right after the DOM update, and
 * "attnlab:pointer-to-frame" at the next animation frame (before paint).
 */
let measured = 0;
const MEASURE_LIMIT = 5000; // keep a long session's timing buffer small

export function measure(marks) {
  if (!marks.length) return;
  measured += marks.length;
  if (measured > MEASURE_LIMIT) {
    measured = 0;
    performance.clearMeasures("attnlab:pointer-to-dom");
    performance.clearMeasures("attnlab:pointer-to-frame");
  }
  const safely = (name, mark) => {
    try {
      performance.measure(name, mark);
    } catch {
      // A benchmark may have cleared the mark between runs.
    }
  };
  for (const mark of marks) safely("attnlab:pointer-to-dom", mark);
  requestAnimationFrame(() => {
    for (const mark of marks) {
      safely("attnlab:pointer-to-frame", mark);
      performance.clearMarks(mark);
    }
  });
}
