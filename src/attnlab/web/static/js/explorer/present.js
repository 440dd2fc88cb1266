// "Present": a toggle that enlarges the explorer for a projector or a shared
// screen (CSS .explorer.presenting: Match, Share and Mix side by side on one
// screen, down to 1280x720 at 150%). A real <button> with aria-pressed, so it
// is keyboard reachable and its state is announced.

import { emit } from "./state.js";

const button = document.getElementById("present");
const explorer = document.getElementById("explorer");

function set(on) {
  button.setAttribute("aria-pressed", String(on));
  explorer.classList.toggle("presenting", on);
  document.body.classList.toggle("presenting", on); // hides the header and intro
  // Present changes the plots' sizes and fonts: draw again, so labels are placed for them
  // (after textbox.js has seen the class change on <body>: its observer runs first).
  queueMicrotask(emit);
  if (on) explorer.scrollIntoView({ block: "start" });
}

if (button && explorer) {
  button.addEventListener("click", () => set(button.getAttribute("aria-pressed") !== "true"));
  // Escape leaves Present, as it leaves full-screen views.
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && button.getAttribute("aria-pressed") === "true") set(false);
  });
}
