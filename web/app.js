// The page: wires the form to a SpeechSession and shows what it measures. Rendering is batched
// to one pass per animation frame, because audio updates arrive hundreds of times a second.

import { opusDecodingSupported } from './opus_stream_decoder.js';
import { SpeechSession } from './speech_session.js';
import { ttsUrl } from './tts_connection.js';
import { renderWaterfall } from './waterfall.js';

const HISTORY_ROWS = 8;

const $ = (id) => document.getElementById(id);
const ui = {
  connection: $('connection'), banner: $('synthetic-banner'), syntheticModel: $('synthetic-model'),
  form: $('speak-form'), text: $('text'), voice: $('voice'), language: $('language'),
  format: $('format'), streamed: $('streamed'), speak: $('speak'), stop: $('stop'), notice: $('notice'),
  serverTtfa: $('server-ttfa'), firstPlayed: $('first-played'), underruns: $('underruns'),
  buffer: $('buffer'), state: $('state'), waterfall: $('waterfall'), waterfallContext: $('waterfall-context'),
  history: $('history'),
};

const historyRows = new Map();  // Utterance → its <tr>
const changed = new Set();      // utterances changed since the last render
let renderScheduled = false;

const session = new SpeechSession(ttsUrl(window.location), {
  onReady: showReady,
  onClosed: showClosed,
  onUtterance: (utterance) => {
    changed.add(utterance);
    scheduleRender();
  },
  onNotice: (text) => { ui.notice.textContent = text; },
});

// What the browser test reads back (tests/browser/): a fresh snapshot on every read.
Object.defineProperty(window, 'megattsStats', { get: statsSnapshot });

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  speak();
});
ui.stop.addEventListener('click', () => session.stop());
ui.text.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    ui.form.requestSubmit();
  }
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') session.stop();
});

await offerFormats();
renderWaterfall(ui.waterfall, null);
session.connect().catch(() => {});  // a failure shows through onClosed

function speak() {
  const text = ui.text.value;
  const limit = session.ready?.limits?.max_text_bytes;
  if (!text.trim()) {
    ui.notice.textContent = 'Type some text first.';
    return;
  }
  if (limit && new TextEncoder().encode(text).length > limit) {
    ui.notice.textContent = `The text is longer than the server takes (${limit} bytes of UTF-8).`;
    return;
  }
  ui.notice.textContent = '';
  session.speak({
    text, voice: ui.voice.value, language: ui.language.value,
    format: ui.format.value, streamed: ui.streamed.checked,
  });
}

// Opus needs WebCodecs; without it the server sends PCM16: some twenty times the bytes, but playable.
async function offerFormats() {
  if (await opusDecodingSupported()) return;
  const opus = ui.format.querySelector('option[value="opus"]');
  opus.disabled = true;
  opus.textContent = 'Opus (this browser has no WebCodecs Opus decoder)';
  ui.format.value = 'pcm16';
}

function showReady() {
  const ready = session.ready;
  fillSelect(ui.voice, ready.voices, ready.defaults?.voice);
  fillSelect(ui.language, ready.languages, ready.defaults?.language ?? 'auto');
  ui.connection.dataset.state = 'ready';
  ui.connection.textContent = `Connected: ${ready.model} (${ready.server})`;
  ui.banner.hidden = !ready.synthetic;
  ui.syntheticModel.textContent = ready.model;
  ui.speak.disabled = false;
}

function showClosed(code, reason) {
  ui.connection.dataset.state = 'closed';
  ui.connection.textContent = `Disconnected (${code}${reason ? `, ${reason}` : ''}); Speak reconnects.`;
  // Speak stays usable once voices are known: it reconnects by itself.
  ui.speak.disabled = ui.voice.options.length === 0;
  scheduleRender();
}

// Keeps the person's choice across reconnects when the server still offers it.
function fillSelect(select, values, preferred) {
  const keep = select.value;
  select.replaceChildren(...values.map((value) => new Option(value, value)));
  select.value = values.includes(keep) ? keep : preferred;
  select.disabled = false;
}

function scheduleRender() {
  if (renderScheduled) return;
  renderScheduled = true;
  requestAnimationFrame(() => {
    renderScheduled = false;
    render();
  });
}

function render() {
  const utterance = session.current;
  const totals = session.totals;
  ui.underruns.textContent = String(totals.underruns);
  ui.stop.disabled = !utterance || utterance.finished;
  if (!utterance) return;
  ui.serverTtfa.textContent = milliseconds(utterance.metrics?.server_ttfa_ms);
  ui.firstPlayed.textContent = milliseconds(utterance.firstPlayedMs);
  renderBuffer(utterance.state === 'playing');
  ui.state.textContent = utterance.error ? `${utterance.state}: ${utterance.error}` : utterance.state;
  ui.waterfallContext.textContent = utterance.context === null ? '' : `(utterance ${utterance.context})`;
  renderWaterfall(ui.waterfall, utterance.metrics?.marks ?? null);
  // Not only the current one: a barge-in stops the previous utterance in the same turn.
  for (const u of changed) renderHistoryRow(u);
  changed.clear();
}

function renderBuffer(playing) {
  if (!playing || session.targetMs === null) {
    ui.buffer.textContent = '—';
    return;
  }
  const target = document.createElement('small');
  target.textContent = `target ${Math.round(session.targetMs)} ms`;
  ui.buffer.replaceChildren(`${Math.round(session.bufferMs)} ms`, target);
}

function renderHistoryRow(utterance) {
  let row = historyRows.get(utterance);
  if (!row) {
    row = document.createElement('tr');
    historyRows.set(utterance, row);
    ui.history.prepend(row);
    if (historyRows.size > HISTORY_ROWS) {
      const [oldest] = historyRows.keys();
      historyRows.get(oldest).remove();
      historyRows.delete(oldest);
    }
  }
  const done = utterance.done;
  const layout = done?.layout ?? (utterance.streamed ? 'word by word' : 'whole');
  const mode = `${layout}, ${utterance.format === 'opus' ? 'Opus' : 'PCM16'}`;
  const result = done?.reason && utterance.finished ? `${utterance.state} (${done.reason})` : utterance.state;
  row.replaceChildren(...[
    utterance.context ?? '…', mode, milliseconds(utterance.metrics?.server_ttfa_ms),
    milliseconds(utterance.firstPlayedMs), milliseconds(done?.audio_ms),
    done?.rtf === undefined ? '—' : done.rtf.toFixed(2), utterance.underruns, result,
  ].map((value) => {
    const cell = document.createElement('td');
    cell.textContent = String(value);
    return cell;
  }));
}

function milliseconds(value) {
  return typeof value === 'number' ? `${value.toFixed(1)} ms` : '—';
}

function statsSnapshot() {
  const utterance = session.current;
  return {
    connected: session.ready !== null,
    model: session.ready?.model ?? null,
    synthetic: session.ready?.synthetic ?? null,
    syntheticBannerShown: !ui.banner.hidden,
    ...session.totals,
    state: utterance?.state ?? 'idle',
    context: utterance?.context ?? null,
    format: utterance?.format ?? null,
    error: utterance?.error ?? null,
    serverTtfaMs: utterance?.metrics?.server_ttfa_ms ?? null,
    firstPlayedMs: utterance?.firstPlayedMs ?? null,
    layout: utterance?.done?.layout ?? null,
    doneReason: utterance?.done?.reason ?? null,
    waterfallMarks: ui.waterfall.querySelectorAll('li[data-ms]').length,
  };
}
