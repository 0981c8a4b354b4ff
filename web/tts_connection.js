// One WebSocket to `/v1/tts` (PROTOCOL.md §1): opens it with the `megatts.v1` subprotocol and
// sorts what arrives into JSON events and parsed audio messages.

import { PROTOCOL_VERSION, TTS_PATH, parseAudioMessage } from './protocol.js';

export function ttsUrl(pageLocation) {
  const scheme = pageLocation.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${pageLocation.host}${TTS_PATH}`;
}

export class TtsConnection {
  #socket;
  #opened;

  // listeners: {onEvent(event), onAudio(message), onBadMessage(description), onClose(code, reason)}.
  // onAudio gets parseAudioMessage()'s object; onBadMessage what could not be parsed.
  constructor(url, listeners) {
    this.#socket = new WebSocket(url, [PROTOCOL_VERSION]);
    this.#socket.binaryType = 'arraybuffer';
    this.#opened = new Promise((resolve, reject) => {
      this.#socket.addEventListener('open', () => resolve(), { once: true });
      this.#socket.addEventListener('close', () => reject(new Error('the connection to the server closed')),
        { once: true });
    });
    // A close before anyone waits is not an error of its own: onClose reports it.
    this.#opened.catch(() => {});
    this.#socket.addEventListener('message', (event) => {
      if (typeof event.data === 'string') {
        let parsed;
        try {
          parsed = JSON.parse(event.data);
        } catch {
          listeners.onBadMessage('an event that is not JSON');
          return;
        }
        listeners.onEvent(parsed);
        return;
      }
      const message = parseAudioMessage(event.data);
      if (message) listeners.onAudio(message);
      else listeners.onBadMessage('an audio message with an unknown header');
    });
    this.#socket.addEventListener('close', (event) => listeners.onClose(event.code, event.reason));
  }

  // Resolves when the socket is open; rejects if it closes first. Messages may be sent right
  // after: the server handles them in order, also before its `ready` event (§1.3).
  opened() { return this.#opened; }

  get open() { return this.#socket.readyState === WebSocket.OPEN; }

  // Whether the socket is opening or open, i.e. worth waiting for rather than replacing.
  get alive() { return this.#socket.readyState <= WebSocket.OPEN; }

  send(text) {
    if (this.open) this.#socket.send(text);
  }
}
