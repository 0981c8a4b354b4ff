// PCM16 audio messages (PROTOCOL.md §5, kind 2): signed 16-bit little-endian mono samples, the
// fallback for browsers without a WebCodecs Opus decoder.

// bytes: the message payload (a Uint8Array view). A DataView reads little-endian whatever the
// machine's byte order.
export function pcm16ToFloat32(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = new Float32Array(bytes.byteLength >> 1);
  for (let i = 0; i < samples.length; ++i) samples[i] = view.getInt16(2 * i, true) / 32768;
  return samples;
}
