// Browser test of the page (web/): starts the real `megatts serve` on 127.0.0.1 with an
// ephemeral port, loads the page in headless Chromium (Debian's, driven by playwright-core),
// speaks three utterances and reads back from `window.megattsStats` that audio was decoded and
// played and that the TTFA waterfall shows every mark:
//   1. PCM16, whole text, Stop once it plays: local silence, and the server confirms the cancel;
//   2. Opus, word by word: the streaming-text layout, played to the end;
//   3. Opus, whole text, played to the end; then the screenshot.
// Finally the server's /metrics must hold the first_played the page reported.
//
//   node page_test.mjs --megatts PATH [--model DIR] [--artifacts DIR] [--deps DIR] [--timeout-s N]
//
// --artifacts receives page.png (the page at the end) and serve.log; --deps is where
// node_modules lives (installed with `npm ci` from this folder's lockfile when missing).
// Exit status 0 on success, 1 on any failure (with the reason), also when --timeout-s passes.

import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.MEGATTS_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];
// Bounds of each wait; the whole run is bounded by --timeout-s on top.
const LISTEN_TIMEOUT_MS = 30_000;
const READY_TIMEOUT_MS = 120_000;
const PAGE_TIMEOUT_MS = 20_000;
const UTTERANCE_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
const METRICS_TIMEOUT_MS = 5_000;
const TTFA_MARKS = 9;

class TestFailure extends Error {}

const { values: options } = parseArgs({
  options: {
    megatts: { type: 'string' },
    model: { type: 'string' },
    artifacts: { type: 'string', default: process.cwd() },
    deps: { type: 'string', default: here },
    'timeout-s': { type: 'string', default: '240' },
  },
});

const cleanups = [];
let stopping = false;    // the server is being stopped on purpose: its exit is no failure
let finishing = null;    // finish() runs once, whoever calls it first
const watchdog = setTimeout(() => finish(new TestFailure(`timed out after ${options['timeout-s']} s`)),
  Number(options['timeout-s']) * 1000);

try {
  if (!options.megatts) throw new TestFailure('--megatts PATH is required');
  mkdirSync(options.artifacts, { recursive: true });
  if (!existsSync(CHROMIUM)) {
    throw new TestFailure(`${CHROMIUM} not found: install Debian's chromium (scripts/install-deps)`);
  }
  const { chromium } = await loadPlaywright(options.deps);
  const server = await startServer(options.megatts, options.model, options.artifacts);
  const page = await openPage(chromium, server.url);
  await stopWhilePlaying(page);
  await speakWordByWord(page);
  await speakWhole(page);
  await page.screenshot({ path: path.join(options.artifacts, 'page.png'), fullPage: true });
  log(`screenshot: ${path.join(options.artifacts, 'page.png')}`);
  await checkServerMetrics(server.url);
  await finish(null);
} catch (error) {
  await finish(error);
}

async function stopWhilePlaying(page) {
  log('1. PCM16, whole text, Stop while it plays');
  await page.selectOption('#format', 'pcm16');
  await page.uncheck('#streamed');
  // Long enough (about half a minute of audio) that the server is still generating when Stop
  // comes, so that the cancel has something to cancel.
  await page.fill('#text', Array(4).fill('This long passage is stopped as soon as it starts to play, ' +
    'well before the server has finished generating it.').join(' '));
  await page.click('#speak');
  const playing = await waitForStats(page, (s) => s.state === 'playing' || s.state === 'failed', UTTERANCE_TIMEOUT_MS);
  expect(playing.state === 'playing', `utterance did not play: ${JSON.stringify(playing)}`);
  expect(playing.doneReason === null, `the server finished (${playing.doneReason}) before Stop`);
  await page.click('#stop');
  const stopped = await waitForStats(page, (s) => s.doneReason === 'cancelled', STOP_TIMEOUT_MS);
  expect(stopped.state === 'stopped', `state after Stop is ${stopped.state}`);
  expect(stopped.format === 'pcm16', `format is ${stopped.format}`);
  // The server refuses a negative first_played_ms (utterance.js: the output timestamp can lag).
  expect(stopped.firstPlayedMs >= 0, `first played ${stopped.firstPlayedMs}`);
  await expectSilence(page);
  log(`   stopped after first played at ${stopped.firstPlayedMs.toFixed(1)} ms; server: done cancelled`);
}

async function speakWordByWord(page) {
  log('2. Opus, word by word');
  await page.selectOption('#format', 'opus');
  await page.check('#streamed');
  await page.fill('#text', 'One word at a time.');
  const s = await speakToTheEnd(page);
  expect(s.layout === 'streaming', `layout is ${s.layout}, expected streaming`);
}

async function speakWhole(page) {
  log('3. Opus, whole text');
  await page.uncheck('#streamed');
  await page.fill('#text', 'Hello from megatts.');
  const s = await speakToTheEnd(page);
  expect(s.layout === 'whole', `layout is ${s.layout}, expected whole`);
}

async function speakToTheEnd(page) {
  const before = await stats(page);
  await page.click('#speak');
  const s = await waitForStats(page,
    (x, played) => x.utterancesPlayed > played || x.state === 'failed' || x.decodeErrors > 0,
    UTTERANCE_TIMEOUT_MS, before.utterancesPlayed);
  expect(s.state === 'played', `utterance ended ${s.state}: ${s.error}`);
  expect(s.format === 'opus', `format is ${s.format}`);
  expect(s.decodeErrors === 0, `${s.decodeErrors} decoder errors`);
  expect(s.protocolErrors === 0, `${s.protocolErrors} protocol errors`);
  expect(s.playedFrames > before.playedFrames, 'no frames played');
  expect(s.decodedFrames > before.decodedFrames, 'no frames decoded');
  expect(s.firstPlayedMs > 0, `first played ${s.firstPlayedMs}`);
  expect(s.serverTtfaMs > 0, `server TTFA ${s.serverTtfaMs}`);
  expect(s.waterfallMarks === TTFA_MARKS, `the waterfall shows ${s.waterfallMarks} of ${TTFA_MARKS} marks`);
  log(`   context ${s.context}: server TTFA ${s.serverTtfaMs.toFixed(1)} ms, first played ` +
      `${s.firstPlayedMs.toFixed(1)} ms, ${s.playedFrames - before.playedFrames} frames played, ` +
      `${s.underruns} underruns so far`);
  return s;
}

// After Stop nothing more may be played: the counter of played frames stands still.
async function expectSilence(page) {
  const a = await stats(page);
  await page.waitForTimeout(300);
  const b = await stats(page);
  expect(b.playedFrames === a.playedFrames, `${b.playedFrames - a.playedFrames} frames played after Stop`);
}

async function openPage(chromium, url) {
  const profile = mkdtempSync(path.join(tmpdir(), 'megatts-chromium-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 900 },
  });
  cleanups.push(() => context.close());
  const page = context.pages()[0] ?? await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  cleanups.push(() => {
    // Reported at the end: a page that logged errors fails even if every check passed.
    if (problems.length) throw new TestFailure(`the page reported problems:\n  ${problems.join('\n  ')}`);
  });
  await page.goto(url, { timeout: PAGE_TIMEOUT_MS });
  const s = await waitForStats(page, (x) => x.connected, PAGE_TIMEOUT_MS);
  expect(s.syntheticBannerShown === s.synthetic, `synthetic ${s.synthetic} but banner shown ${s.syntheticBannerShown}`);
  log(`page connected: model ${s.model}${s.synthetic ? ' (synthetic, banner shown)' : ''}`);
  return page;
}

// The page reports each utterance's first_played over its WebSocket as the sound starts, so the
// last report may still be on its way when the page's own checks are done: poll for a while.
async function checkServerMetrics(url) {
  const deadline = Date.now() + METRICS_TIMEOUT_MS;
  for (;;) {
    const text = await (await fetch(new URL('/metrics', url))).text();
    const line = text.split('\n').find((l) => l.startsWith('megatts_client_first_played_seconds_count'));
    const count = Number(line?.split(' ').pop());
    if (count >= 3 || Date.now() > deadline) {
      expect(count >= 3, `the server recorded ${line ?? 'no'} client first_played (expected 3)`);
      log(`server /metrics: ${line}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stats(page) {
  return page.evaluate(() => window.megattsStats);
}

// Polls window.megattsStats until done(stats, arg) holds; fails with the last stats otherwise.
async function waitForStats(page, done, timeoutMs, arg) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats(page);
    if (done(s, arg)) return s;
    if (Date.now() > deadline) throw new TestFailure(`waited ${timeoutMs} ms for ${done}\n  stats: ${JSON.stringify(s)}`);
    await page.waitForTimeout(50);
  }
}

async function startServer(megatts, model, artifacts) {
  const logPath = path.join(artifacts, 'serve.log');
  const logFile = createWriteStream(logPath);
  const args = ['serve', '--listen', '127.0.0.1:0', ...(model ? ['--model', model] : [])];
  const child = spawn(megatts, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(logFile);
  child.stderr.pipe(logFile);
  cleanups.push(() => stopServer(child));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exited.then(({ code, signal }) => {
    if (!stopping) finish(new TestFailure(`megatts serve exited (${signal ?? code}); see ${logPath}`));
  });
  log(`started: ${megatts} ${args.join(' ')} (pid ${child.pid})`);

  const url = await new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new TestFailure(`no "listening on" line from the server in ${LISTEN_TIMEOUT_MS} ms`)),
      LISTEN_TIMEOUT_MS);
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/listening on (http:\/\/\S+)/);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (true) {
    const response = await fetch(new URL('/readyz', url)).catch(() => null);
    if (response?.status === 200) break;
    if (Date.now() > deadline) throw new TestFailure(`${url}readyz not ready in ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  log(`server ready at ${url}`);
  return { url };
}


async function stopServer(child) {
  stopping = true;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// playwright-core from this folder's lockfile, installed into `deps` on first use.
async function loadPlaywright(deps) {
  const entry = path.join(deps, 'node_modules', 'playwright-core', 'index.mjs');
  if (!existsSync(entry)) {
    mkdirSync(deps, { recursive: true });
    if (path.resolve(deps) !== here) {
      for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(here, file), path.join(deps, file));
    }
    log(`npm ci in ${deps}`);
    const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: deps, stdio: 'inherit', timeout: 300_000 });
    if (npm.status !== 0) throw new TestFailure(`npm ci in ${deps} failed (${npm.error?.message ?? `status ${npm.status}`})`);
  }
  return import(entry);
}


// Runs the cleanups in reverse order of registration (the page's problem check first, the server
// last) and exits.
function finish(error) {
  finishing ??= (async () => {
    clearTimeout(watchdog);
    let failure = error;
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (e) {
        failure ??= e;
      }
    }
    if (failure) {
      log(`FAIL: ${failure instanceof TestFailure ? failure.message : failure.stack}`);
      const logPath = path.join(options.artifacts, 'serve.log');
      if (existsSync(logPath)) log(`server log (tail):\n${readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n')}`);
      process.exit(1);
    }
    log('PASS');
    process.exit(0);
  })();
  return finishing;
}

function expect(condition, message) {
  if (!condition) throw new TestFailure(message);
}

function log(message) {
  console.log(`[browser/page] ${message}`);
}
