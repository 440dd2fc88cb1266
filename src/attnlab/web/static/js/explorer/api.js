// The explorer's link to the server, always the same origin (CSP connect-src
// 'self'). Each state of the page is one message, {held, edits}: over one
// WebSocket (/api/state/ws: a few ms less per update than a fetch), or when the
// socket cannot open or drops, the same body by POST /api/state.
// The caller keeps at most one request in flight, so one waiter is enough.
// Bodies are written by toJson, which keeps a typed -0 (JSON.stringify drops its sign).

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

async function viaFetch(input) {
  const response = await fetch("/api/state", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: toJson(input),
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return { ok: response.ok, status: response.status, body };
}

/**
 * One state of the page: the held example and the edits to apply
 * ({held, edits}); resolves to {ok, status, body} with body = {sequence,
 * explorer, stepper}. Rejects only when the server cannot be reached (the
 * caller shows the offline message).
 */
export function postState(body) {
  return send(body);
}

async function send(input) {
  // Until the socket is open, go by HTTP and let the socket connect meanwhile,
  // so the first numbers never wait for the WebSocket handshake.
  const ws = socket;
  if (!ws) connect();
  if (ws) {
    try {
      const answer = await new Promise((resolve, reject) => {
        waiter = { resolve, reject };
        ws.send(toJson(input));
      });
      return { ok: answer.status === 200, status: answer.status, body: answer.body };
    } catch {
      // The socket dropped mid-answer: try once over HTTP (which tells us if the server is gone).
    }
  }
  return viaFetch(input);
}

/** GET the page's first answer: the worked example's whole state answer. */
export async function getExample() {
  const response = await fetch("/api/example");
  if (!response.ok) throw new Error(`example: HTTP ${response.status}`);
  return response.json();
}
