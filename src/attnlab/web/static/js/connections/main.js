// Boot a connection lab's page: the lab is named by the address (/connections/<name>) and its
// inputs by the link's query (?n=64&tile=16). Every view draws the one state's answer
// (state.js); none computes a number or writes a sentence.

import { byId, fill, h, text } from "../shared/dom.js";
import { mountGlossary } from "../shared/glossary.js";
import { mountControls } from "./controls.js";
import { mountExport } from "./exporter.js";
import { mountFigures } from "./figures.js";
import { mountPractice } from "./practice.js";
import { mountPython } from "./python.js";
import { getState, setInputs, start, studyAction, subscribe } from "./state.js";
import { drawTables } from "./tables.js";

const drawControls = mountControls(byId("cx-control-list"), setInputs);
const drawFigures = mountFigures(byId("cx-pictures"));
const drawPython = mountPython(
  { copy: byId("cx-copy"), download: byId("cx-download"), status: byId("cx-python-status"), code: byId("cx-code") },
  () => getState().answer,
);
const drawPractice = mountPractice({
  note: byId("cx-practice-note"),
  message: byId("cx-practice-message"),
  list: byId("cx-challenges"),
  history: byId("cx-history"),
});
mountExport({ json: byId("cx-export-json"), markdown: byId("cx-export-markdown"), status: byId("cx-export-status") });

const numbers = byId("cx-numbers");
const python = byId("cx-python");
numbers.addEventListener("toggle", () => {
  if (!numbers.open) return;
  if (getState().answer) drawTables(byId("cx-tables"), getState().answer);
  studyAction({ kind: "help", help: "numbers" });
});
python.addEventListener("toggle", () => python.open && studyAction({ kind: "help", help: "python" }));

function draw(st) {
  drawControls(st.answer, st.inputs, st.errors);
  const problem = byId("cx-problem");
  text(problem, st.problem);
  problem.hidden = !st.problem;
  drawPractice(st);
  const answer = st.answer;
  if (!answer) return;
  drawFigures(answer);
  fill(byId("cx-words"), answer.words.map((w) => h("li", null, w.text)));
  if (numbers.open) drawTables(byId("cx-tables"), answer);
  drawPython(answer);
  byId("cx-link").setAttribute("href", answer.link);
  document.body.dataset.ready = "true";
}

subscribe(draw);
mountGlossary(); // the jargon defined where it first appears (lab/glossary.py)
start(window.location.pathname.split("/").pop(), new URLSearchParams(window.location.search));
