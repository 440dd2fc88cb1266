// The explorer's link to the server, always the same origin (CSP connect-src
// 'self'). Each state of the page is one message, {held, edits}: over one
// WebSocket (/api/state/ws: a few ms less per update than a fetch), or when the
// socket cannot open or drops, the same body by POST /api/state. Both answer in
// shared/http.js's one convention: the answer ({sequence, explorer, stepper}), or
// an ApiError with the status and the lab's fields and messages.
// The caller keeps at most one request in flight, so one waiter is enough.
// Bodies are written by toJson, which keeps a typed -0 (JSON.stringify drops its sign).

import { ApiError, fieldMessages, getJSON, postJSON } from "../shared/http.js";
import { toJson } from "../shared/json.js";

let socket = null; // an open WebSocket, or null
let opening = null; // a Promise while connecting
let waiter = null; // {resolve, reject} for the message in flight

function connect() {
  if (socket) return Promise.resolve(socket);
  if (opening) return opening;
  opening = new Promise((resolve) => {
    let ws;
    try {
      ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/state/ws`);
    } catch {
      resolve(null);
      return;
    }
    ws.onopen = () => {
      socket = ws;
      resolve(ws);
    };
    ws.onmessage = (event) => {
      const w = waiter;
      waiter = null;
      if (w) w.resolve(JSON.parse(event.data));
    };
    ws.onclose = () => {
      if (socket === ws) socket = null;
      resolve(null);
      const w = waiter;
      waiter = null;
      if (w) w.reject(new Error("socket closed"));
    };
  }).finally(() => {
    opening = null;
  });
  return opening;
}

/**
 * One state of the page: the held example and the edits to apply ({held,
 * edits}). Resolves to {sequence, explorer, stepper}; throws an ApiError when
 * the server refuses it, and the browser's error when the server cannot be
 * reached (the caller shows the offline message).
 */
export async function postState(input) {
  // Until the socket is open, go by HTTP and let the socket connect meanwhile,
  // so the first numbers never wait for the WebSocket handshake.
  const ws = socket;
  if (!ws) connect();
  if (ws) {
    let answer = null;
    try {
      answer = await new Promise((resolve, reject) => {
        waiter = { resolve, reject };
        ws.send(toJson(input));
      });
    } catch {
      // The socket dropped mid-answer: try once over HTTP (which tells us if the server is gone).
    }
    if (answer) {
      if (answer.status === 200) return answer.body;
      throw ApiError.of(answer.status, answer.body);
    }
  }
  return postJSON("/api/state", input);
}

/** GET the page's first answer: the worked example's whole state answer. */
export function getExample() {
  return getJSON("/api/example");
}

/**
 * A refused state's messages by field path ({"q[1]": "Query q · y must be …"}), or {body} when
 * the server named no field. A refused held edit made from the explorer's fields
 * ("edits[0].q[1]") is shown next to that field ("q[1]"); the words are the lab's either way.
 */
export function fieldErrorsOf(error) {
  const errors = {};
  for (const [field, msg] of Object.entries(fieldMessages(error))) {
    errors[field.replace(/^edits\[\d+\]\./, "")] = msg;
  }
  return errors;
}
