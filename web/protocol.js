// The wire protocol megatts.v1 (daemon/PROTOCOL.md), client side: the binary audio header,
// the client messages, and the names the server fixes. Nothing here touches the DOM or audio.

export const PROTOCOL_VERSION = 'megatts.v1';
export const TTS_PATH = '/v1/tts';

// TTFA marks in pipeline order (PROTOCOL.md §4.3, DESIGN.md §1); the waterfall draws them so.
export const TTFA_MARKS = Object.freeze([
  'received', 'tokenized', 'admitted', 'prefill_done', 'first_code0',
  'first_frame', 'first_pcm', 'first_packet', 'first_sent',
]);

// Binary audio message (§5): a 16-byte little-endian header, then one Opus packet or PCM16 block.
export const AUDIO_HEADER_BYTES = 16;
export const AUDIO_HEADER_VERSION = 1;
export const AUDIO_KIND = Object.freeze({ opus: 1, pcm16: 2 });
const FLAG_FIRST = 1 << 0;
const FLAG_LAST = 1 << 1;

// Parses one binary audio message. Returns null when it is not one this client understands
// (short, or another header version), so that the caller counts it as a protocol error rather
// than decoding garbage. `payload` is a view into `buffer`, not a copy.
export function parseAudioMessage(buffer) {
  if (buffer.byteLength < AUDIO_HEADER_BYTES) return null;
  const view = new DataView(buffer);
  const version = view.getUint8(0);
  if (version !== AUDIO_HEADER_VERSION) return null;
  const flags = view.getUint16(2, true);
  return {
    kind: view.getUint8(1),
    first: (flags & FLAG_FIRST) !== 0,
    last: (flags & FLAG_LAST) !== 0,
    context: view.getUint32(4, true),
    sequence: view.getUint32(8, true),
    timestamp: view.getUint32(12, true),
    payload: new Uint8Array(buffer, AUDIO_HEADER_BYTES),
  };
}

// Client messages (§2). Each returns the JSON text of one WebSocket text frame.

export function startMessage({ voice, language, format, sampleRate, text, end }) {
  const message = { type: 'start', protocol: PROTOCOL_VERSION, voice, language, format, sample_rate: sampleRate };
  if (text !== undefined) message.text = text;
  if (end) message.end = true;
  return JSON.stringify(message);
}

export function textMessage(text, { end = false } = {}) {
  return JSON.stringify(end ? { type: 'text', text, end: true } : { type: 'text', text });
}

export function cancelMessage() {
  return JSON.stringify({ type: 'cancel' });
}

// `report` holds the optional members of §2.6 in camelCase; absent ones are left out, so that
// the server does not record a first_played of an utterance that never played.
export function clientMetricsMessage(context, report) {
  const message = { type: 'client_metrics', context };
  const names = {
    firstPlayedMs: 'first_played_ms', underruns: 'underruns', bufferMs: 'buffer_ms',
    playedSamples: 'played_samples', decodeErrors: 'decode_errors',
  };
  for (const [key, wire] of Object.entries(names)) {
    if (report[key] !== undefined) message[wire] = report[key];
  }
  return JSON.stringify(message);
}
