// Boot the guided notebook around the explorer: content, the held sequence,
// the stepper, the playback, practice, the study history and export. It shares
// the explorer's state module (explorer/state.js), so the explorer above and the held
// example stay connected.

import { byId } from "../shared/dom.js";
import { mountGlossary } from "../shared/glossary.js";
import { mountContent } from "./content.js";
import { mountExport } from "./export.js";
import { mountHistory, watchHelp } from "./history.js";
import { startNotebook } from "./state.js";
import { mountPlayback } from "./playback.js";
import { mountPractice } from "./practice.js";
import { mountSequence } from "./sequence.js";
import { mountStepper } from "./stepper.js";

mountContent({
  math: byId("core-math"),
  papers: byId("papers"),
  connections: byId("connections"),
  footer: byId("notebook-footer"),
});

mountSequence({
  title: byId("held-title"),
  table: byId("seq-table"),
  message: byId("seq-message"),
  explorerNote: byId("seq-explorer-note"),
  unmasked: byId("seq-unmasked"),
  summaries: byId("seq-summaries"),
});

mountStepper({
  root: byId("stepper"),
  title: byId("stepper-title"),
  question: byId("stepper-question"),
  explanation: byId("stepper-explanation"),
  notation: byId("stepper-notation"),
  shapes: byId("stepper-shapes"),
  symbols: byId("stepper-symbols"),
  inspectTitle: byId("stepper-inspect-title"),
  table: byId("stepper-table"),
  note: byId("stepper-note"),
  prev: byId("stepper-prev"),
  next: byId("stepper-next"),
});

mountPlayback({
  root: byId("playback"),
  animated: byId("playback-animated"),
  stepped: byId("playback-stepped"),
  keys: byId("playback-keys"),
  pie: byId("playback-pie"),
  values: byId("playback-values"),
  caption: byId("playback-caption"),
  play: byId("playback-play"),
  restart: byId("playback-restart"),
  scrub: byId("playback-scrub"),
  time: byId("playback-time"),
  steps: byId("playback-steps"),
  stepTitle: byId("playback-step-title"),
  stepPrev: byId("playback-step-prev"),
  stepNext: byId("playback-step-next"),
});

mountPractice({
  list: byId("challenges"),
  note: byId("practice-note"),
  message: byId("practice-message"),
  explorerSlot: byId("challenge-slot-explorer"),
  heldSlot: byId("challenge-slot-held"),
});
mountHistory({ list: byId("history-list") });
mountExport({
  root: byId("export"),
  status: byId("export-status"),
  file: byId("import-file"),
  importStatus: byId("import-status"),
});
watchHelp();
startNotebook();
mountGlossary(); // the jargon defined where it first appears (lab/glossary.py)
