// The audio-thread half of the player: an AudioWorkletProcessor that plays mono Float32 samples
// from a ring buffer, behind a small jitter buffer.
//
// Messages in (port):  {type: 'begin', id}            a new utterance; prebuffer before playing it
//                      {type: 'samples', id, samples}  Float32Array at the context rate (transferred)
//                      {type: 'end', id}               no more samples: play out what is buffered
//                      {type: 'flush'}                 drop everything now (Stop, barge-in)
// Messages out (port): {type: 'first_played', id, frame}  context frame of the utterance's first sample
//                      {type: 'underrun', id}             the buffer ran dry before the utterance ended
//                      {type: 'progress', id, played, bufferedFrames, targetFrames}  about every 100 ms
//                      {type: 'drained', id, played}      the utterance's last sample has been played
// `played` counts the utterance's samples taken out of the buffer, silence padding excluded.

// Jitter buffer: start (and restart after an underrun) once this much is buffered, or the
// utterance has ended. 60 ms is three 20 ms Opus packets: enough to ride out a late packet on a
// LAN without making the first sound noticeably later. Each underrun raises the target by a
// step, up to a ceiling, because a network that starved the buffer once will likely do it again.
const TARGET_START_MS = 60;
const TARGET_STEP_MS = 20;
const TARGET_MAX_MS = 200;
const PROGRESS_INTERVAL_MS = 100;

// Starts at about 10 s of audio at 48 kHz, a power of two so that positions wrap with a mask.
// The server sends faster than real time, so the ring doubles when a push would not fit instead
// of dropping audio; growing happens in the message handler, never inside process().
const INITIAL_CAPACITY = 1 << 19;

class RingBuffer {
  #data = new Float32Array(INITIAL_CAPACITY);
  #read = 0;   // total samples ever read; positions grow without bound and are masked on use
  #write = 0;  // total samples ever written

  get available() { return this.#write - this.#read; }

  push(samples) {
    if (this.available + samples.length > this.#data.length) this.#grow(this.available + samples.length);
    const mask = this.#data.length - 1;
    const start = this.#write & mask;
    const head = Math.min(samples.length, this.#data.length - start);
    this.#data.set(samples.subarray(0, head), start);
    this.#data.set(samples.subarray(head), 0);
    this.#write += samples.length;
  }

  // Copies up to target.length samples into target; returns how many it copied.
  pop(target) {
    const count = Math.min(target.length, this.available);
    const mask = this.#data.length - 1;
    const start = this.#read & mask;
    const head = Math.min(count, this.#data.length - start);
    target.set(this.#data.subarray(start, start + head), 0);
    target.set(this.#data.subarray(0, count - head), head);
    this.#read += count;
    return count;
  }

  clear() { this.#read = this.#write; }

  #grow(needed) {
    let capacity = this.#data.length * 2;
    while (capacity < needed) capacity *= 2;
    const data = new Float32Array(capacity);
    const available = this.available;
    this.pop(data.subarray(0, available));
    this.#data = data;
    this.#read = 0;
    this.#write = available;
  }
}

class PlayerProcessor extends AudioWorkletProcessor {
  #ring = new RingBuffer();
  #id = null;             // utterance being played; null when idle
  #ended = false;         // its 'end' arrived: play out without waiting for the target
  #playing = false;       // false while prebuffering
  #firstPlayed = false;
  #played = 0;
  #targetFrames = Math.round(TARGET_START_MS * sampleRate / 1000);
  #framesSinceProgress = 0;

  constructor() {
    super();
    this.port.onmessage = (event) => this.#receive(event.data);
  }

  #receive(message) {
    switch (message.type) {
      case 'begin':
        this.#ring.clear();
        this.#id = message.id;
        this.#ended = false;
        this.#playing = false;
        this.#firstPlayed = false;
        this.#played = 0;
        break;
      case 'samples':
        if (message.id === this.#id) this.#ring.push(message.samples);
        break;
      case 'end':
        if (message.id === this.#id) this.#ended = true;
        break;
      case 'flush':
        this.#ring.clear();
        this.#id = null;
        break;
    }
  }

  process(_inputs, outputs) {
    const out = outputs[0][0];
    out.fill(0);
    if (this.#id === null) return true;

    if (!this.#playing) {
      this.#playing = this.#ended || this.#ring.available >= this.#targetFrames;
      if (!this.#playing) return true;
    }
    const copied = this.#ring.pop(out);
    if (copied > 0 && !this.#firstPlayed) {
      this.#firstPlayed = true;
      this.port.postMessage({ type: 'first_played', id: this.#id, frame: currentFrame });
    }
    this.#played += copied;

    if (copied < out.length) {
      if (this.#ended) {
        this.port.postMessage({ type: 'drained', id: this.#id, played: this.#played });
        this.#id = null;
        return true;
      }
      this.#underrun();
    }
    this.#reportProgress(out.length);
    return true;
  }

  #underrun() {
    this.#playing = false;
    const stepFrames = Math.round(TARGET_STEP_MS * sampleRate / 1000);
    const maxFrames = Math.round(TARGET_MAX_MS * sampleRate / 1000);
    this.#targetFrames = Math.min(this.#targetFrames + stepFrames, maxFrames);
    this.port.postMessage({ type: 'underrun', id: this.#id });
  }

  #reportProgress(frames) {
    this.#framesSinceProgress += frames;
    if (this.#framesSinceProgress * 1000 < PROGRESS_INTERVAL_MS * sampleRate) return;
    this.#framesSinceProgress = 0;
    this.port.postMessage({
      type: 'progress', id: this.#id, played: this.#played,
      bufferedFrames: this.#ring.available, targetFrames: this.#targetFrames,
    });
  }
}

registerProcessor('megatts-player', PlayerProcessor);
