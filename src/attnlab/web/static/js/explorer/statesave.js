// This tab's saved states (sessionStorage): written by state.js, read at start
// by statestart.js. JSON by toJson, so a typed -0 survives a reload.

import { toJson } from "../shared/json.js";

export function save(key, data) {
  try {
    sessionStorage.setItem(key, toJson(data));
  } catch {
    // Storage can be full or disabled; the page still works for this view.
  }
}

export function forget(key) {
  try {
    sessionStorage.removeItem(key);
  } catch {
    // Storage disabled: nothing saved to drop.
  }
}

/** The saved value under `key`, or null (none, storage disabled, or a damaged entry). */
export function restore(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}
