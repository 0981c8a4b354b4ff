// The main-thread half of the player: owns the AudioContext and the worklet (player_worklet.js),
// hands it decoded samples, and turns what it reports into callbacks on the main thread's clock.

// Both stream formats are requested at this rate (Opus decodes at 48 kHz; PCM16 is resampled by
// the server to it), and the context runs at it, so the page never resamples.
export const PLAYBACK_RATE = 48000;

export class AudioPlayer {
  #context;
  #node;
  #listeners;

  // listeners: {onFirstPlayed(id, performanceMs), onUnderrun(id), onProgress(id, report),
  // onDrained(id, played)}. Construct it from a user gesture (a click), or the browser's
  // autoplay policy keeps the context suspended.
  static async create(listeners) {
    const context = new AudioContext({ sampleRate: PLAYBACK_RATE, latencyHint: 'interactive' });
    await context.audioWorklet.addModule(new URL('./player_worklet.js', import.meta.url));
    const node = new AudioWorkletNode(context, 'megatts-player', {
      numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1],
    });
    node.connect(context.destination);
    return new AudioPlayer(context, node, listeners);
  }

  constructor(context, node, listeners) {
    this.#context = context;
    this.#node = node;
    this.#listeners = listeners;
    node.port.onmessage = (event) => this.#receive(event.data);
  }

  get sampleRate() { return this.#context.sampleRate; }

  // The context may have been suspended (autoplay policy, or the tab was in the background).
  resume() { return this.#context.resume(); }

  begin(id) { this.#node.port.postMessage({ type: 'begin', id }); }

  // Transfers the samples' buffer: the caller must not touch `samples` afterwards.
  push(id, samples) { this.#node.port.postMessage({ type: 'samples', id, samples }, [samples.buffer]); }

  end(id) { this.#node.port.postMessage({ type: 'end', id }); }

  flush() { this.#node.port.postMessage({ type: 'flush' }); }

  #receive(message) {
    switch (message.type) {
      case 'first_played':
        this.#listeners.onFirstPlayed(message.id, this.#performanceTimeOfFrame(message.frame));
        break;
      case 'underrun':
        this.#listeners.onUnderrun(message.id);
        break;
      case 'progress':
        this.#listeners.onProgress(message.id, {
          played: message.played,
          bufferedMs: (message.bufferedFrames * 1000) / this.sampleRate,
          targetMs: (message.targetFrames * 1000) / this.sampleRate,
        });
        break;
      case 'drained':
        this.#listeners.onDrained(message.id, message.played);
        break;
    }
  }

  // When the sample at context frame `frame` leaves the audio output, on the performance.now()
  // clock. getOutputTimestamp() pairs a context time with the moment the output device presents
  // it, so the output latency is included; before the device has reported a first timestamp it
  // returns zeros, and the worklet's own moment (now) is the best estimate left.
  #performanceTimeOfFrame(frame) {
    const stamp = this.#context.getOutputTimestamp();
    if (!stamp.performanceTime) return performance.now();
    return stamp.performanceTime + (frame / this.sampleRate - stamp.contextTime) * 1000;
  }
}
