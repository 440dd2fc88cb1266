// Boot the explorer: mount each view once, then redraw from the one state
// object on every change. Views inside closed disclosures draw when opened.

import { byId } from "../shared/dom.js";
import { mountCurrent } from "./current.js";
import { mountDetails } from "./details.js";
import { mountGeometry } from "./geomview.js";
import { mountMatch } from "./match.js";
import { drawValuePlane } from "./mix.js";
import { drawPrecise } from "./precise.js";
import { mountOwnExample } from "./own.js";
import { mountPython } from "./python.js";
import { drawPie, drawScoreTable, drawStrip } from "./share.js";
import { getExplorer, getState, resetExample, setExplorer, subscribe } from "./state.js";
import { start } from "./statestart.js";
import { drawStatus } from "./status.js";
import { drawSummary } from "./summary.js";
import { drawWords } from "./words.js";

const match = mountMatch(byId("match-plot"), {
  describe: "match-help",
  onQuery: (q, marks) => setExplorer({ q }, { marks }),
  getQuery: () => getExplorer().q,
});

const drawDetails = mountDetails(
  {
    qFields: byId("q-fields"),
    normalization: byId("normalization"),
    scoreTitle: byId("score-axis-title"),
    scoreAxis: byId("score-axis"),
    shareTitle: byId("share-strip-title"),
    shareStrip: byId("detail-strip"),
    cards: byId("cards"),
    output: byId("detail-output"),
    comparison: byId("comparison"),
    comparisonBlock: byId("every-number"),
    formulaScale: byId("formula-scale"),
    formulaScale2: byId("formula-scale-2"),
    formulaCode: byId("formula-code"),
  },
  {
    onQuery: (j, value) => {
      const q = getExplorer().q;
      q[j] = value;
      setExplorer({ q });
    },
  },
);

const drawPython = mountPython(
  { copy: byId("copy-python"), download: byId("download-python"), status: byId("python-status"), code: byId("python-code"), expected: byId("python-expected") },
  () => getState().result,
);

const drawGeometry = mountGeometry({
  keys: byId("geometry-keys"),
  values: byId("geometry-values"),
  keyNote: byId("geometry-keys-note"),
  valueNote: byId("geometry-values-note"),
});

const drawCurrent = mountCurrent(
  { shapes: byId("shapes"), notation: byId("notation"), keysBody: byId("keys-body"), values: byId("value-fields") },
  {
    onValue: (i, j, value) => {
      const values = getExplorer().values;
      values[i][j] = value;
      setExplorer({ values });
    },
  },
);

const summaryEls = {
  rowLabel: byId("row-label"),
  caption: byId("query-caption"),
  summary: byId("summary"),
  challenge: byId("challenge"),
  goal: byId("challenge-goal"),
  status: byId("challenge-status"),
  badge: byId("challenge-badge"),
  eyebrow: byId("explorer-eyebrow"),
  mixHint: byId("mix-hint"),
  // state.ui.texts keys (lab/explorer/texts.py) -> the elements they fill
  texts: {
    row: byId("row-explain"),
    given: byId("explorer-given"),
    q_legend: byId("q-legend"),
    allowed: byId("current-allowed"),
    example: byId("words-example"),
  },
};
const statusEls = { offline: byId("offline"), problem: byId("problem") };
const wordEls = { match: byId("words-match"), share: byId("words-share"), mix: byId("words-mix") };

// Disclosures and what they draw; a closed one is drawn when it opens.
const disclosures = [
  [byId("every-number"), (state) => drawDetails(state)],
  [byId("precise"), (state) => drawPrecise(byId("precise-list"), state.result)],
  [byId("python"), (state) => drawPython(state.result)],
  [byId("geometry"), (state) => drawGeometry(state.result)],
  [byId("current"), (state) => drawCurrent(state)],
];

let firstRender = true;

/** Draw everything visible for `state`. */
function draw(state) {
  drawStatus(statusEls, state);
  drawSummary(summaryEls, state);
  const result = state.result;
  if (!result) return;
  if (firstRender) {
    firstRender = false;
    requestAnimationFrame(() => performance.mark("attnlab:first-render"));
  }
  match.draw(result);
  drawPie(byId("pie"), result);
  drawStrip(byId("strip"), result);
  drawScoreTable(byId("score-table"), result);
  drawValuePlane(byId("mix-plot"), result, "mix");
  drawWords(wordEls, result);
  for (const [details, drawPart] of disclosures) {
    if (details.open) drawPart(state);
  }
}

for (const [details, drawPart] of disclosures) {
  details.addEventListener("toggle", () => {
    if (details.open && getState().result) drawPart(getState());
  });
}

mountOwnExample({
  root: byId("own-example"),
  sources: byId("own-sources"),
  add: byId("own-add"),
  count: byId("own-count"),
  scale: byId("own-scale"),
  scaleError: byId("own-scale-error"),
  use: byId("own-use"),
});

byId("reset").addEventListener("click", () => resetExample());
subscribe(draw);
start();
