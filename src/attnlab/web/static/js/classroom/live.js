// A WebSocket to the class that comes back by itself: after a drop (the server restarted,
// the network went away) it reconnects, waiting 0.5 s, then 1, 2, 4, at most 5 s between
// tries, for as long as the page is open. Same origin only (CSP connect-src 'self').
// onStatus(true | false) says whether it is connected; onMessage gets each parsed message.

const WAITS_MS = [500, 1000, 2000, 4000, 5000];

/**
 * @param {string} path e.g. "/api/class/ws"
 * @param {{onMessage: (message: object) => void, onStatus?: (open: boolean) => void, onOpen?: (send: Function) => void}} handlers
 * @returns {{send: (message: object) => void, close: () => void}}
 */
export function live(path, { onMessage, onStatus = () => {}, onOpen = () => {} }) {
  let ws = null;
  let tries = 0;
  let closed = false;
  let timer = null;

  function send(message) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  }

  function open() {
    if (closed) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(`${scheme}://${location.host}${path}`);
    ws.onopen = () => {
      tries = 0;
      onStatus(true);
      onOpen(send);
    };
    ws.onmessage = (event) => {
      try {
        onMessage(JSON.parse(event.data));
      } catch {
        // a message that is not JSON is no message of the class's
      }
    };
    ws.onclose = (event) => {
      onStatus(false);
      ws = null;
      if (closed || event.code === 4401 || event.code === 4403 || event.code === 4404) return;
      timer = setTimeout(open, WAITS_MS[Math.min(tries, WAITS_MS.length - 1)]);
      tries += 1;
    };
  }

  open();
  return {
    send,
    close() {
      closed = true;
      clearTimeout(timer);
      if (ws) ws.close();
    },
  };
}
