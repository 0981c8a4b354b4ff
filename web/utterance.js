// One utterance as the page sees it, from the `start` it sent to its last sample played (or
// Stop): checks the header fields of its audio messages, decodes them and feeds the player, and
// keeps what the page shows about it.

import { AUDIO_KIND } from './protocol.js';
import { OpusStreamDecoder } from './opus_stream_decoder.js';
import { pcm16ToFloat32 } from './pcm16.js';

// Page-wide counters that every utterance adds to (window.megattsStats shows them).
export function newPlaybackTotals() {
  return { decodedFrames: 0, playedFrames: 0, underruns: 0, decodeErrors: 0, protocolErrors: 0, utterancesPlayed: 0 };
}

// Player ids: unique on the page, unlike contexts, which start again at 1 on each connection.
let lastPlaybackId = 0;

export class Utterance {
  playbackId = ++lastPlaybackId;
  // requested → started → playing → played, or stopped (Stop) / failed (refused, connection lost)
  state = 'requested';
  context = null;        // assigned by `started`
  sentAtMs = null;       // performance.now() when its first text left
  firstPlayedMs = null;  // from sentAtMs to its first sample leaving the audio output
  metrics = null;        // the server's `metrics` event
  done = null;           // the server's `done` event
  error = null;          // what went wrong, for people
  underruns = 0;
  decodedFrames = 0;
  playedFrames = 0;
  decodeErrors = 0;
  protocolErrors = 0;

  #player;
  #totals;
  #onChange;
  #decoder = null;
  #nextSequence = 0;
  #audioEnded = false;
  #unreportedUnderruns = 0;
  #firstPushedMs = null;  // performance.now() when its first samples went to the player

  // format: 'opus' | 'pcm16'; totals: from newPlaybackTotals(); onChange(): after any change
  // the page should show.
  constructor({ format, streamed, totals, onChange }) {
    this.format = format;
    this.streamed = streamed;
    this.#totals = totals;
    this.#onChange = onChange;
  }

  // The AudioPlayer, attached before the utterance's start goes out (it is created on demand).
  attachPlayer(player) {
    this.#player = player;
  }

  get finished() { return ['played', 'stopped', 'failed'].includes(this.state); }

  textSent() {
    this.sentAtMs ??= performance.now();
  }

  started(event) {
    this.context = event.context;
    if (this.finished) {  // stopped before it started: the session cancels it
      this.#onChange();
      return;
    }
    if (event.sample_rate !== this.#player.sampleRate) {
      this.fail(`the server sends ${event.sample_rate} Hz audio; the player runs at ${this.#player.sampleRate} Hz`);
      return;
    }
    this.state = 'started';
    if (this.format === 'opus') {
      this.#decoder = new OpusStreamDecoder({
        preSkip: event.pre_skip ?? 0,
        onSamples: (samples) => this.#play(samples),
        onError: (error) => this.#decodeFailed(error),
      });
    }
    this.#player.begin(this.playbackId);
    this.#onChange();
  }

  audio(message) {
    if (this.finished || this.#audioEnded) return;  // late audio of a stopped utterance
    if (!this.#inSequence(message)) this.#count('protocolErrors', 1);
    this.#nextSequence = message.sequence + 1;
    if (message.last) {
      this.#endAudio();
    } else if (message.kind !== AUDIO_KIND[this.format]) {
      this.#count('protocolErrors', 1);
    } else if (this.#decoder) {
      this.#decoder.decode(message.payload, message.timestamp);
    } else {
      this.#play(pcm16ToFloat32(message.payload));
    }
  }

  serverMetrics(event) {
    this.metrics = event;
    this.#onChange();
  }

  // The `done` event. Its audio ends with the `last` message just before it; ending here too
  // keeps playback finishing should that message ever be missing.
  serverDone(event) {
    this.done = event;
    if (event.reason !== 'cancelled') this.#endAudio();
    this.#onChange();
  }

  // An `error` event about this utterance; it still ends with `done`.
  serverError(event) {
    this.error = `${event.code}: ${event.message}`;
    this.#onChange();
  }

  // `performanceMs`: when the player says the first sample left the output. Not before the samples
  // reached the player: that estimate comes from the output device's last timestamp, which can lag
  // (headless Chromium on a busy machine put a first sample 20.9 ms before its text was sent), and
  // the server refuses a negative first_played_ms.
  firstPlayed(performanceMs) {
    this.firstPlayedMs = Math.max(performanceMs, this.#firstPushedMs ?? this.sentAtMs) - this.sentAtMs;
    this.state = 'playing';
    this.#onChange();
  }

  underrun() {
    this.underruns += 1;
    this.#unreportedUnderruns += 1;
    this.#totals.underruns += 1;
    this.#onChange();
  }

  progress(played) {
    this.#totals.playedFrames += played - this.playedFrames;
    this.playedFrames = played;
    this.#onChange();
  }

  drained(played) {
    this.progress(played);
    this.state = 'played';
    this.#totals.utterancesPlayed += 1;
    this.#onChange();
  }

  // Stop: nothing more is decoded or played. The caller flushes the player and tells the server.
  stop() {
    this.#finish('stopped', null);
  }

  fail(reason) {
    this.#finish('failed', reason);
  }

  // Underruns since the previous report: client_metrics carries deltas (PROTOCOL.md §2.6).
  takeUnreportedUnderruns() {
    const count = this.#unreportedUnderruns;
    this.#unreportedUnderruns = 0;
    return count;
  }

  #finish(state, reason) {
    if (this.finished) return;
    this.state = state;
    this.error ??= reason;
    this.#decoder?.close();
    this.#onChange();
  }

  #inSequence(message) {
    return message.sequence === this.#nextSequence && message.first === (message.sequence === 0);
  }

  #play(samples) {
    if (this.finished) return;
    this.#count('decodedFrames', samples.length);
    this.#firstPushedMs ??= performance.now();
    this.#player.push(this.playbackId, samples);
  }

  async #endAudio() {
    if (this.#audioEnded) return;
    this.#audioEnded = true;
    try {
      await this.#decoder?.flush();
    } catch {
      return;  // closed by Stop or by a decoding error: nothing more to play
    }
    if (!this.finished) this.#player.end(this.playbackId);
  }

  // Audio decoded before the error still plays; the rest of the utterance is lost.
  #decodeFailed(error) {
    this.#count('decodeErrors', 1);
    this.error = `Opus decoder: ${error.message}`;
    this.#audioEnded = true;
    if (!this.finished) this.#player.end(this.playbackId);
  }

  #count(name, n) {
    this[name] += n;
    this.#totals[name] += n;
    this.#onChange();
  }
}
