// Decodes one utterance's Opus packets (PROTOCOL.md §5, kind 1) to mono Float32 at 48 kHz with
// WebCodecs' AudioDecoder, dropping the encoder's pre-skip. One instance per utterance: the
// server starts a fresh encoder for each, so the decoder state must start fresh too.

const OPUS_RATE = 48000;
const CONFIG = Object.freeze({ codec: 'opus', sampleRate: OPUS_RATE, numberOfChannels: 1 });

// Whether this browser decodes Opus with WebCodecs; when not, the page asks for PCM16.
export async function opusDecodingSupported() {
  if (typeof AudioDecoder === 'undefined') return false;
  try {
    return (await AudioDecoder.isConfigSupported(CONFIG)).supported === true;
  } catch {
    return false;
  }
}

export class OpusStreamDecoder {
  #decoder;
  #preSkipLeft;
  #onSamples;
  #onError;

  // preSkip: `started.pre_skip`, in 48 kHz samples. onSamples(Float32Array) gets the audio in
  // order; onError(error) is called once if the decoder fails, after which it decodes nothing.
  constructor({ preSkip, onSamples, onError }) {
    this.#preSkipLeft = preSkip;
    this.#onSamples = onSamples;
    this.#onError = onError;
    this.#decoder = new AudioDecoder({
      output: (data) => this.#output(data),
      error: (error) => this.#onError(error),
    });
    this.#decoder.configure(CONFIG);
  }

  // packet: one raw Opus packet (no OpusHead `description` is configured, so WebCodecs takes
  // each chunk as one RFC 6716 packet); timestamp: its first sample, in 48 kHz samples.
  decode(packet, timestamp) {
    if (this.#decoder.state !== 'configured') return;
    this.#decoder.decode(new EncodedAudioChunk({
      type: 'key',  // every Opus packet decodes on its own
      timestamp: Math.round((timestamp * 1e6) / OPUS_RATE),
      data: packet,
    }));
  }

  // Resolves once every packet given so far has come out of onSamples.
  async flush() {
    if (this.#decoder.state === 'configured') await this.#decoder.flush();
  }

  // Drops what is still being decoded (Stop); nothing more comes out.
  close() {
    if (this.#decoder.state !== 'closed') this.#decoder.close();
  }

  #output(data) {
    const frames = data.numberOfFrames;
    const skip = Math.min(this.#preSkipLeft, frames);
    this.#preSkipLeft -= skip;
    if (skip < frames) {
      const samples = new Float32Array(frames - skip);
      data.copyTo(samples, { planeIndex: 0, format: 'f32-planar', frameOffset: skip });
      this.#onSamples(samples);
    }
    data.close();
  }
}
