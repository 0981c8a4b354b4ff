// The TTFA waterfall: one row per stage mark of an utterance (PROTOCOL.md §4.3), each bar
// spanning from the previous mark to this one on a common time axis, so that the stage that
// costs the most stands out. Rows are plain list items with their numbers as text, so that a
// screen reader reads the same breakdown the bars show.

import { TTFA_MARKS } from './protocol.js';

// list: the <ol> to fill; marks: the `metrics` event's `marks` ({name: ms after received}), or
// null before an utterance has any. Every mark gets a row; one not reached shows a dash.
export function renderWaterfall(list, marks) {
  const reached = TTFA_MARKS.filter((name) => typeof marks?.[name] === 'number');
  const total = Math.max(...reached.map((name) => marks[name]), 0);
  let previous = 0;
  list.replaceChildren(...TTFA_MARKS.map((name) => {
    const ms = marks?.[name];
    const row = document.createElement('li');
    row.dataset.mark = name;
    const label = element('span', 'mark-name', name);
    const track = element('span', 'mark-track');
    track.setAttribute('aria-hidden', 'true');
    if (typeof ms !== 'number') {
      row.classList.add('missing');
      row.append(label, track, element('span', 'mark-value', '—'));
      return row;
    }
    row.dataset.ms = String(ms);
    const bar = element('span', 'mark-bar');
    const start = Math.min(previous, ms);
    bar.style.left = `${percent(start, total)}%`;
    bar.style.width = `${Math.max(percent(ms - start, total), 0.5)}%`;
    track.append(bar);
    const value = element('span', 'mark-value', `${ms.toFixed(1)} ms`);
    value.append(element('span', 'mark-delta', ` +${(ms - start).toFixed(1)}`));
    row.append(label, track, value);
    previous = ms;
    return row;
  }));
}

function percent(ms, total) {
  return total > 0 ? (100 * ms) / total : 0;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
