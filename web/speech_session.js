// The page's side of the native protocol: speaks one utterance at a time over a TtsConnection,
// routes events and audio to it, implements Stop, and reports playback back to the server.
//
// Stop must never leave a `start` unanswered behind a `cancel`: the server withdraws such a
// start without any event (PROTOCOL.md §2.5), and the page could then not tell which utterance a
// later `started` belongs to. So a Stop before `started` silences the page at once but sends its
// `cancel` when that `started` arrives, and a new `start` goes out only once the previous one
// has been answered (by `started`, or by an `error` refusing it).

import { cancelMessage, clientMetricsMessage, startMessage, textMessage } from './protocol.js';
import { AudioPlayer, PLAYBACK_RATE } from './audio_player.js';
import { TtsConnection } from './tts_connection.js';
import { Utterance, newPlaybackTotals } from './utterance.js';

// Word-by-word mode sends one word per interval: 25 words/s, about the pace of an LLM streaming
// 30-odd tokens/s, and far ahead of speech (about 3 words/s), as text from an LLM is.
const WORD_INTERVAL_MS = 40;

// "Hello  big world." → ["Hello  ", "big ", "world."]: each word keeps the spaces after it, so
// that the server receives exactly the text typed.
export function splitWords(text) {
  return text.match(/\s*\S+\s*/g) ?? [];
}

export class SpeechSession {
  totals = newPlaybackTotals();
  ready = null;      // the server's `ready` event on the open connection, null while there is none
  bufferMs = 0;      // audio waiting in the player
  targetMs = null;   // the player's jitter-buffer target, once it has reported it

  #url;
  #listeners;
  #player = null;            // the AudioPlayer, once started
  #playerStarting = null;    // its creation, while it runs
  #connection = null;
  #current = null;           // the utterance being spoken or played
  #awaitingStart = null;     // {utterance, answered()} whose `start` awaits its answer
  #startGate = Promise.resolve();

  // listeners: {onReady(), onClosed(code, reason), onUtterance(utterance), onNotice(text)}.
  constructor(url, listeners) {
    this.#url = url;
    this.#listeners = listeners;
  }

  get current() { return this.#current; }

  // Opens the connection unless one is open or opening; resolves when it is open.
  connect() {
    if (!this.#connection?.alive) {
      const connection = new TtsConnection(this.#url, {
        onEvent: (event) => this.#event(event),
        onAudio: (message) => this.#forContext(message.context)?.audio(message),
        onBadMessage: (what) => this.#badMessage(what),
        onClose: (code, reason) => this.#closed(connection, code, reason),
      });
      this.#connection = connection;
    }
    return this.#connection.opened();
  }

  // options: {text, voice, language, format: 'opus'|'pcm16', streamed}. Call it from a user
  // gesture: the first call starts the audio output, which browsers allow only then. Speaking
  // while an utterance plays stops it first (barge-in).
  async speak({ text, voice, language, format, streamed }) {
    // Synchronously up to the first await, so that a Stop right after Speak finds the utterance.
    this.stop();
    const utterance = new Utterance({
      format, streamed, totals: this.totals,
      onChange: () => this.#listeners.onUtterance(utterance),
    });
    this.#current = utterance;
    this.#listeners.onUtterance(utterance);

    const previousAnswered = this.#startGate;
    let answered;
    this.#startGate = new Promise((resolve) => { answered = resolve; });
    try {
      utterance.attachPlayer(await this.#startPlayer());
      await previousAnswered;
      await this.connect();
    } catch (error) {
      utterance.fail(error.message);
      answered();
      return;
    }
    if (utterance.finished) {  // stopped while waiting: it never reached the server
      answered();
      return;
    }
    this.#awaitingStart = { utterance, answered };
    const start = { voice, language, format, sampleRate: PLAYBACK_RATE };
    const words = streamed ? splitWords(text) : [];
    if (words.length < 2) {
      // The whole text in the start: the server uses the non-streaming layout (§2.1).
      this.#connection.send(startMessage({ ...start, text, end: true }));
      utterance.textSent();
      return;
    }
    this.#connection.send(startMessage(start));
    await this.#sendWords(utterance, words);
  }

  // Stop: silence now, and tell the server (now, or once the utterance has its context).
  stop() {
    const utterance = this.#current;
    if (!utterance || utterance.finished) return;
    utterance.stop();
    this.#player?.flush();
    if (utterance.context !== null && !utterance.done) this.#connection.send(cancelMessage());
    this.#reportEnd(utterance);
  }

  // The first call creates the audio output; a failed creation is tried again next time.
  async #startPlayer() {
    this.#playerStarting ??= AudioPlayer.create(this.#playerListeners()).then(
      (player) => { this.#player = player; return player; },
      (error) => { this.#playerStarting = null; throw error; });
    const player = await this.#playerStarting;
    await player.resume();
    return player;
  }

  async #sendWords(utterance, words) {
    for (let i = 0; i < words.length; ++i) {
      if (utterance.finished || !this.#connection.open) return;
      this.#connection.send(textMessage(words[i], { end: i === words.length - 1 }));
      utterance.textSent();
      if (i < words.length - 1) await new Promise((resolve) => setTimeout(resolve, WORD_INTERVAL_MS));
    }
  }

  #event(event) {
    switch (event.type) {
      case 'ready':
        this.ready = event;
        this.#listeners.onReady();
        break;
      case 'started':
        this.#started(event);
        break;
      case 'metrics':
        this.#forContext(event.context)?.serverMetrics(event);
        break;
      case 'done':
        this.#forContext(event.context)?.serverDone(event);
        break;
      case 'stall':
        this.#listeners.onNotice(event.stalled
          ? `The server paused generation: ${event.queued_ms} ms of audio are waiting to be sent.`
          : 'The server resumed generation.');
        break;
      case 'error':
        this.#error(event);
        break;
    }
  }

  #started(event) {
    if (!this.#awaitingStart) return;  // cannot happen with one start at a time; nothing to play
    const { utterance, answered } = this.#awaitingStart;
    this.#awaitingStart = null;
    utterance.started(event);
    // Stopped before it had a context: cancel it now, before a later start can go out.
    if (utterance.finished) this.#connection.send(cancelMessage());
    answered();
  }

  #error(event) {
    if (event.context !== undefined) {
      this.#forContext(event.context)?.serverError(event);
    } else if (this.#awaitingStart) {
      // Events answer messages in order, and the start was its utterance's first message:
      // an error without a context while the start awaits its answer refuses it.
      const { utterance, answered } = this.#awaitingStart;
      this.#awaitingStart = null;
      utterance.fail(`${event.code}: ${event.message}`);
      answered();
    }
    this.#listeners.onNotice(`Server error ${event.code}: ${event.message}`);
  }

  #badMessage(what) {
    this.totals.protocolErrors += 1;
    this.#listeners.onNotice(`The server sent ${what}; it was ignored.`);
  }

  #forContext(context) {
    return this.#current?.context === context ? this.#current : null;
  }

  #closed(connection, code, reason) {
    if (connection !== this.#connection) return;
    this.ready = null;
    if (this.#current && !this.#current.finished) {
      this.#current.fail(`the connection closed (${code}${reason ? `, ${reason}` : ''})`);
      this.#player?.flush();
    }
    if (this.#awaitingStart) {
      this.#awaitingStart.answered();
      this.#awaitingStart = null;
    }
    this.#listeners.onClosed(code, reason);
  }

  #playerListeners() {
    return {
      onFirstPlayed: (id, performanceMs) => {
        const utterance = this.#playing(id);
        if (!utterance) return;
        utterance.firstPlayed(performanceMs);
        this.#connection.send(clientMetricsMessage(utterance.context, {
          firstPlayedMs: Math.round(utterance.firstPlayedMs * 10) / 10,
        }));
      },
      onUnderrun: (id) => this.#playing(id)?.underrun(),
      onProgress: (id, report) => {
        this.bufferMs = report.bufferedMs;
        this.targetMs = report.targetMs;
        this.#playing(id)?.progress(report.played);
      },
      onDrained: (id, played) => {
        const utterance = this.#playing(id);
        if (!utterance) return;
        this.bufferMs = 0;
        utterance.drained(played);
        this.#reportEnd(utterance);
      },
    };
  }

  #playing(playbackId) {
    const utterance = this.#current;
    return utterance?.playbackId === playbackId && !utterance.finished ? utterance : null;
  }

  // The rest of what the player measured, once the utterance is over. For a stopped utterance
  // the played count is that of the player's last progress report, at most 100 ms old.
  #reportEnd(utterance) {
    if (utterance.context === null) return;
    this.#connection.send(clientMetricsMessage(utterance.context, {
      underruns: utterance.takeUnreportedUnderruns(),
      bufferMs: this.targetMs === null ? undefined : Math.round(this.targetMs),
      playedSamples: utterance.playedFrames,
      decodeErrors: utterance.decodeErrors,
    }));
  }
}
