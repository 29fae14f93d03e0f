// The subsim playground's page script. It only ever sets textContent and attributes, never
// markup, so nothing a scenario says is read as HTML. It talks to the server's API only
// (docs/playground.md); it loads nothing else.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const MAX_ROWS = 400;
// Narration lines listed; a longer run says how many more there are.
const MAX_LINES = 2000;

const play = {
  events: [],      // every trace event received, parsed
  narration: [],   // {t, text}
  shown: 0,        // events on screen
  now: 0,          // the instant on screen (µs)
  paused: false,
  streaming: false,
  done: false,
  speed: null,     // null: instant
  started: 0,      // performance.now() when the stream began
  controller: null,
  summary: null,
  limit: null,
  expect: null,    // the `expect:` verdict (`event: expect`)
  model: null,     // the run's derived model (`event: model`), when the server sends one
  end: null,       // the session's end (µs): its last decision, once the run is done
  stepping: false, // Step shows part of an instant: drawn from the events, not the model
  frame: 0,
};

// What the page knows of the scenario in the editor: the shipped scenario it was picked
// from (and that scenario's text), and the name and description `/api/check` last read.
const scenario = {
  list: [],          // /api/scenarios
  texts: new Map(),  // path → its text, once fetched
  picked: null,      // path of the scenario picked (or matched), if any
  name: '',          // the scenario's own `name:`, as last checked
};

// ---- never a blank page: a view that cannot draw says so -----------------------------------

// Runs `draw`; when it throws, the view says so in words (and the console has the error,
// for the tests), and the other views go on.
function guarded(view, element, draw) {
  try {
    draw();
  } catch (error) {
    console.error(`the ${view} could not be drawn:`, error);
    const message = `The ${view} cannot be drawn: ${error && error.message ? error.message : error}`;
    if (element instanceof SVGElement) {
      element.replaceChildren();
      element.setAttribute('height', '24');
      node('text', { x: 4, y: 15 }, element).textContent = message;
    } else {
      element.textContent = message;
    }
  }
}

window.addEventListener('error', (event) => {
  setStatus('the page hit a problem: ' + event.message);
});
window.addEventListener('unhandledrejection', (event) => {
  const reason = event.reason && event.reason.message ? event.reason.message : String(event.reason);
  setStatus('the page hit a problem: ' + reason);
});

// A run's label: its name, or its id when the spawn gave it none.
function label(id, name) {
  return typeof name === 'string' && name !== '' ? name : String(id);
}

// ---- the editor: line numbers, problems -------------------------------------------------

function lineCount() {
  return $('source').value.split('\n').length;
}

function drawGutter(errors) {
  const gutter = $('gutter');
  const lines = lineCount();
  gutter.replaceChildren();
  for (let line = 1; line <= lines; line++) {
    const div = document.createElement('div');
    div.textContent = String(line);
    div.dataset.line = String(line);
    const problem = errors && errors.get(line);
    if (problem) {
      div.className = 'error';
      div.title = problem;
    }
    gutter.appendChild(div);
  }
  gutter.scrollTop = $('source').scrollTop;
}

function showProblems(list) {
  const errors = new Map();
  const ul = $('problems');
  ul.replaceChildren();
  for (const problem of list) {
    const li = document.createElement('li');
    const where = problem.file === 'scenario.yaml'
      ? `line ${problem.line}, column ${problem.column}: `
      : `${problem.file}:${problem.line}:${problem.column}: `;
    li.textContent = where + problem.message;
    if (problem.help) {
      const help = document.createElement('span');
      help.className = 'help';
      help.textContent = 'help: ' + problem.help;
      li.appendChild(help);
    }
    ul.appendChild(li);
    if (problem.file === 'scenario.yaml' && !errors.has(problem.line)) {
      errors.set(problem.line, problem.message);
    }
  }
  drawGutter(errors);
}

// ---- the controls: each a --set path ------------------------------------------------------

function controls() {
  const set = {};
  for (const input of document.querySelectorAll('#controls [data-path]')) {
    const value = input.value.trim();
    if (value !== '') set[input.dataset.path] = value;
  }
  return set;
}

function showSets() {
  const set = controls();
  const lines = Object.entries(set).map(([path, value]) => `--set ${path}=${value}`);
  $('sets').textContent = lines.length ? lines.join('\n') : '(no --set: the scenario as written)';
}

function body(extra) {
  return JSON.stringify(Object.assign({ scenario: $('source').value, set: controls() }, extra));
}

// The status of an answer: a 422 asked for as 200 (`?problems=200`, so that the browser
// does not log a scenario being edited as an error) says 422 in X-Subsim-Status.
function statusOf(response) {
  return Number(response.headers.get('X-Subsim-Status') || response.status);
}

async function postJson(path, extra, payload) {
  const response = await fetch(path + '?problems=200', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: payload || body(extra),
  });
  let answer = null;
  try { answer = await response.json(); } catch (_) { answer = {}; }
  return { status: statusOf(response), answer };
}

let checkTimer = 0;
let checkCount = 0;
function scheduleCheck() {
  clearTimeout(checkTimer);
  checkTimer = setTimeout(check, 300);
}

async function check() {
  const mine = ++checkCount;
  const { status, answer } = await postJson('/api/check');
  if (mine !== checkCount) return;
  if (status === 422) {
    showProblems(answer.diagnostics || []);
    setStatus(`${(answer.diagnostics || []).length} problem(s) in the scenario`);
  } else if (status === 200) {
    showProblems([]);
    scenario.name = typeof answer.name === 'string' ? answer.name : '';
    describe(answer.description);
    await syncPicker();
  } else {
    setStatus(answer.error || `check answered ${status}`);
  }
}

// ---- the picker and the share link ------------------------------------------------------

async function loadPicker() {
  const response = await fetch('/api/scenarios');
  const list = await response.json();
  scenario.list = list;
  const picker = $('picker');
  const groups = new Map();
  for (const item of list) {
    let group = groups.get(item.family);
    if (!group) {
      group = document.createElement('optgroup');
      group.label = item.family;
      groups.set(item.family, group);
      picker.appendChild(group);
    }
    const option = document.createElement('option');
    option.value = item.path;
    option.textContent = item.name;
    option.title = item.description;
    option.dataset.description = item.description;
    group.appendChild(option);
  }
  // The scenario in the editor when it is no shipped one as written: edited or shared.
  const own = document.createElement('option');
  own.id = 'picker-own';
  own.value = '';
  own.hidden = true;
  picker.appendChild(own);
}

// A shipped scenario's text (fetched once).
async function shippedText(path) {
  if (!scenario.texts.has(path)) {
    const response = await fetch('/api/scenario/' + path);
    if (!response.ok) return null;
    scenario.texts.set(path, await response.text());
  }
  return scenario.texts.get(path);
}

// Loads a shipped scenario into the editor and draws it (instantly).
async function pick(path) {
  // The run on screen stops now: what it would still draw belongs to another scenario.
  if (play.controller) play.controller.abort();
  setState('loading');
  if (await load(path)) await run({ instant: true });
}

// Loads a shipped scenario into the editor; false when there is no such scenario.
async function load(path) {
  const text = await shippedText(path);
  if (text === null) return false;
  scenario.picked = path;
  const entry = scenario.list.find((item) => item.path === path);
  scenario.name = entry ? entry.name : '';
  setSource(text);
  markPicker();
  describe(entry ? entry.description : '');
  return true;
}

function describe(description) {
  $('description').textContent = description && description.trim() !== ''
    ? description : '(this scenario has no description)';
}

// The picker shows the shipped scenario the editor holds as written, or, once edited (or
// from a shared link), the scenario's own name marked as such.
function markPicker() {
  const own = $('picker-own');
  const text = $('source').value;
  const picked = scenario.picked;
  if (picked && scenario.texts.get(picked) === text) {
    own.hidden = true;
    $('picker').value = picked;
    return;
  }
  const name = scenario.name || 'a scenario';
  own.textContent = picked ? `${name} (edited)` : `${name} (shared)`;
  own.hidden = false;
  $('picker').value = '';
}

// After a check: a scenario that is a shipped one as written is shown as that one (a shared
// link of the demo is the demo).
async function syncPicker() {
  const text = $('source').value;
  if (!(scenario.picked && scenario.texts.get(scenario.picked) === text)) {
    for (const entry of scenario.list.filter((item) => item.name === scenario.name)) {
      if (await shippedText(entry.path) === text) {
        scenario.picked = entry.path;
        break;
      }
    }
  }
  if ($('source').value === text) markPicker();
}

function setSource(text) {
  $('source').value = text;
  drawGutter(null);
  scheduleCheck();
}

function toBase64(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

function share() {
  const fragment = 's=' + toBase64(JSON.stringify({ scenario: $('source').value, set: controls() }));
  history.replaceState(null, '', '#' + fragment);
  $('share').value = location.href;
  $('share').select();
}

function fromFragment() {
  const match = /^#s=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!match) return false;
  try {
    const shared = JSON.parse(fromBase64(match[1]));
    for (const input of document.querySelectorAll('#controls [data-path]')) {
      const value = shared.set && shared.set[input.dataset.path];
      input.value = typeof value === 'string' ? value : '';
    }
    scenario.picked = null;
    scenario.name = '';
    setSource(String(shared.scenario || ''));
    markPicker();
    $('description').textContent = 'A shared scenario (its description appears once it is read).';
    return true;
  } catch (_) {
    setStatus('the link\'s scenario could not be read');
    return false;
  }
}

// ---- the run: streamed, shown live, paused, stepped, scrubbed -----------------------------

function setStatus(text) {
  $('status').textContent = text;
}

// Where the run stands, for scripts and tests: running, done, problems (the scenario has
// problems) or stopped (the run ended without its end).
function setState(state) {
  $('status').dataset.state = state;
}

function parseBlock(block) {
  let event = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return { event, data: data.join('\n') };
}

// POSTs to /api/run and calls on(event, data) for each server-sent event.
async function stream(extra, on, signal) {
  const response = await fetch('/api/run?problems=200', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: body(extra),
    signal,
  });
  if (statusOf(response) !== 200) {
    let answer = {};
    try { answer = await response.json(); } catch (error) {
      // A run superseded while its answer was read is not an answer without problems.
      if (signal && signal.aborted) throw error;
    }
    return { status: statusOf(response), answer };
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, at);
      buffered = buffered.slice(at + 2);
      const { event, data } = parseBlock(block);
      on(event, data);
    }
  }
  return { status: response.status, answer: null };
}

// Runs the editor's scenario: at the chosen speed, or instantly (`{instant: true}`: the
// page draws a scenario as soon as it is loaded or picked).
async function run(options) {
  if (play.controller) play.controller.abort();
  Object.assign(play, {
    events: [], narration: [], shown: 0, now: 0, paused: false, streaming: true, done: false,
    summary: null, limit: null, expect: null, model: null, end: null, stepping: false,
    narrationCut: false,
    controller: new AbortController(), started: performance.now(),
  });
  const speed = options && options.instant ? 'instant' : $('speed').value;
  play.speed = speed === 'instant' ? null : Number(speed);
  $('narration').replaceChildren();
  $('narration-more').textContent = '';
  $('why-end').textContent = '';
  setState('running');
  showExpect();
  $('scrubber').disabled = true;
  $('pause').disabled = false;
  $('pause').textContent = 'Pause';
  $('step').disabled = false;
  setStatus('running…');
  tick();
  const controller = play.controller;
  let result;
  try {
    result = await stream({ speed: play.speed === null ? 'instant' : play.speed, narration: MAX_LINES },
      receive, controller.signal);
  } catch (error) {
    if (error.name === 'AbortError') return;
    setStatus('the run stopped: ' + error.message);
    setState('stopped');
    play.streaming = false;
    return;
  }
  // A newer run took the page while this one's answer came in: what is shown is the newer one's.
  if (play.controller !== controller) return;
  play.streaming = false;
  // A stream that ended without `end`: stopped by --max-run-time (`limit`) or a failure.
  if (result.status === 200 && !play.done) setStatus(play.limit || 'the run stopped before its end');
  if (result.status === 422) {
    showProblems(result.answer.diagnostics || []);
    setStatus('the scenario has problems: see below the editor');
    setState('problems');
  } else if (result.status !== 200) {
    setStatus(result.answer.error || `the server answered ${result.status}`);
    setState('stopped');
  } else if (!play.done) {
    setStatus('the run stopped before its end (the server closed the stream)');
    setState('stopped');
  }
  if (!play.done) {
    $('pause').disabled = true;
    $('step').disabled = true;
  }
}

function receive(event, data) {
  if (event === 'message') {
    play.events.push(JSON.parse(data));
    if (!play.paused) play.shown = play.events.length;
  } else if (event === 'narration') {
    const told = JSON.parse(data);
    if (told.cut) play.narrationCut = true;
    for (const line of told.text.split('\n')) {
      if (line.trim() !== '') play.narration.push({ t: told.t_us, text: line });
    }
  } else if (event === 'limit') {
    play.limit = JSON.parse(data).message;
  } else if (event === 'expect') {
    play.expect = JSON.parse(data);
  } else if (event === 'model') {
    play.model = JSON.parse(data);
  } else if (event === 'end') {
    play.summary = JSON.parse(data);
    finish();
  }
}

// The session's end: its last decision (the panel's bookkeeping after it, a finished row
// leaving 30 s later, is not part of it), as `subsim run` and the report say it.
function sessionEnd() {
  if (play.model && play.model.end && typeof play.model.end.t_us === 'number') return play.model.end.t_us;
  if (play.summary && typeof play.summary.makespan_us === 'number') return play.summary.makespan_us;
  return play.events.length ? play.events[play.events.length - 1].t_us : 0;
}

function finish() {
  play.done = true;
  const end = sessionEnd();
  play.end = end;
  const scrubber = $('scrubber');
  scrubber.max = String(end);
  scrubber.step = String(Math.max(1, Math.floor(end / 1000)));
  scrubber.disabled = false;
  if (!play.paused) {
    play.shown = play.events.length;
    play.now = end;
    scrubber.value = String(end);
  }
  $('step').disabled = play.shown >= play.events.length;
  setStatus(doneText(play.summary, end));
  showExpect();
  $('why-end').textContent = play.model && play.model.end && play.model.end.because
    ? play.model.end.because : '';
  render();
  setState('done');
  fetchPanel();
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : (many || one + 's')}`;

function doneText(s, end) {
  let text = `done: the session ended at ${clock(end)}`;
  try {
    const rejected = s.spawns.rejected;
    const atCap = s.spawns.rejected_by_reason.concurrent_limit;
    text += ` · ${plural(s.events, 'event')}, ${plural(s.spawns.started, 'run')} started, ` +
      `${rejected} rejected` + (rejected ? ` (${atCap} at the cap)` : '') +
      `, at most ${s.running.peak} running at once`;
  } catch (_) {
    text += ' (the summary could not be read)';
  }
  if (play.limit) text += ' — ' + play.limit;
  return text;
}

// The scenario's `expect:` after a run, as `subsim check` judges it.
function showExpect() {
  const box = $('expect');
  box.replaceChildren();
  box.className = '';
  const verdict = play.expect;
  if (!verdict) return;
  const head = document.createElement('strong');
  if (verdict.expectations === 0 && !verdict.limit) {
    box.className = 'none';
    head.textContent = 'expect: (none: this scenario states no expectations)';
    box.appendChild(head);
    return;
  }
  const failed = verdict.failures.length;
  box.className = verdict.passed ? 'passed' : 'failed';
  head.textContent = verdict.passed
    ? `expect: passed (${plural(verdict.expectations, 'assertion')}, as subsim check says)`
    : `expect: FAILED (${failed} of ${plural(verdict.expectations, 'assertion')}` +
      (verdict.limit ? ', and the run was cut short' : '') + ')';
  box.appendChild(head);
  const list = document.createElement('ul');
  if (verdict.limit) {
    const li = document.createElement('li');
    li.textContent = verdict.limit;
    list.appendChild(li);
  }
  for (const failure of verdict.failures) {
    const li = document.createElement('li');
    const where = failure.location ? ` (${failure.location.replace(/^.*?:(\d+):\d+$/, 'line $1')})` : '';
    const marked = typeof failure.at_us === 'number'
      ? ` — marked on the timeline at ${clock(failure.at_us)}` + (failure.rule ? ` (${failure.rule})` : '') : '';
    li.textContent = `#${failure.expect}${where}: expected ${failure.expected}; got ${failure.got}${marked}`;
    for (const hint of failure.hints || []) {
      const span = document.createElement('span');
      span.className = 'help';
      span.textContent = hint;
      li.appendChild(span);
    }
    list.appendChild(li);
  }
  if (list.children.length) box.appendChild(list);
}

function tick() {
  cancelAnimationFrame(play.frame);
  const step = () => {
    if (!play.paused && play.streaming && !play.done) {
      const last = play.shown ? play.events[play.shown - 1].t_us : 0;
      const live = play.speed === null ? last
        : (performance.now() - play.started) / 1000 * play.speed * 1e6;
      play.now = Math.max(last, live);
    }
    render();
    throttledPanel();
    if (play.streaming) play.frame = requestAnimationFrame(step);
  };
  play.frame = requestAnimationFrame(step);
}

function pause() {
  play.paused = !play.paused;
  $('pause').textContent = play.paused ? 'Resume' : 'Pause';
  if (!play.paused) {
    play.stepping = false;
    play.shown = play.events.length;
    if (play.done) play.now = play.end;
    tick();
  }
  render();
  fetchPanel();
}

// Shows events up to and including the next decision (an event that cites a rule).
function stepOnce() {
  if (!play.paused) pause();
  play.stepping = true;
  let next = play.shown;
  while (next < play.events.length && !play.events[next].rule) next++;
  play.shown = Math.min(play.events.length, next + 1);
  play.now = play.shown ? play.events[play.shown - 1].t_us : 0;
  if (play.done) {
    play.now = Math.min(play.now, play.end);
    $('scrubber').value = String(play.now);
  }
  $('step').disabled = play.done && play.shown >= play.events.length;
  render();
  fetchPanel();
  const current = document.querySelector('#narration li.current');
  if (current) showInList($('narration'), current);
}

function scrub() {
  play.stepping = false;
  play.paused = true;
  $('pause').textContent = 'Resume';
  play.now = Number($('scrubber').value);
  let shown = 0;
  while (shown < play.events.length && play.events[shown].t_us <= play.now) shown++;
  play.shown = shown;
  $('step').disabled = shown >= play.events.length;
  render();
  fetchPanel();
}

// ---- drawing --------------------------------------------------------------------------------

// The picture of the first `count` events: one row per run, the rejections, the running
// count. Kept per events list and carried forward as events arrive (a long run is read
// once, not once a frame); going back (Step, the scrubber) reads it again from the start.
const pictures = new WeakMap();

function model(events, count) {
  let m = pictures.get(events);
  if (!m || m.upTo > count) {
    m = { upTo: 0, rows: [], byId: new Map(), rejects: [], counts: [[0, 0]], cap: null, finished: 0, peak: 0 };
    pictures.set(events, m);
  }
  for (let index = m.upTo; index < count; index++) {
    const e = events[index];
    if (e.kind === 'session_started') m.cap = e.cap;
    if (e.kind === 'agent_started') {
      const row = { id: e.agent, name: label(e.agent, e.name), named: !!e.name, segments: [{ from: e.t_us, to: null, mode: e.mode }] };
      m.byId.set(e.agent, row);
      m.rows.push(row);
    } else if (e.kind === 'agent_resumed') {
      const row = m.byId.get(e.agent);
      if (row) row.segments.push({ from: e.t_us, to: null, mode: e.mode });
    } else if (e.kind === 'agent_finished') {
      m.finished++;
      const row = m.byId.get(e.agent);
      const last = row && row.segments[row.segments.length - 1];
      if (last && last.to === null) last.to = e.t_us;
    } else if (e.kind === 'spawn_rejected') {
      m.rejects.push({ t: e.t_us, reason: e.reason, name: label(e.agent_type || 'a spawn', e.name), caller: e.caller, rule: e.rule });
    }
    if (typeof e.running === 'number') {
      m.peak = Math.max(m.peak, e.running);
      // One point per change: a long run draws as many points as the count changes.
      const previous = m.counts[m.counts.length - 1];
      if (previous[0] === e.t_us) previous[1] = e.running;
      else if (previous[1] !== e.running) m.counts.push([e.t_us, e.running]);
    }
  }
  m.upTo = count;
  return m;
}

// What the server's run model (`event: model`) says, as the drawing wants it, at `now`:
// each run's stretches up to then (a stretch still going then is drawn open), the
// rejections (from the trace: the model counts them, the trace has their reasons) and the
// running count.
function fromModel(md, now, events) {
  const rows = [];
  for (const run of md.runs) {
    if (run.id === 'main') continue;
    const segments = [];
    for (const span of run.spans) {
      if (span.from_us > now) continue;
      segments.push({ from: span.from_us, to: span.to_us <= now ? span.to_us : null, mode: run.mode, state: span.state });
    }
    if (segments.length) rows.push({ id: run.id, name: label(run.id, run.label), named: run.label !== run.id, segments });
  }
  const rejects = [];
  for (const e of events) {
    if (e.kind === 'spawn_rejected' && e.t_us <= now) {
      rejects.push({ t: e.t_us, reason: e.reason, name: label(e.agent_type || 'a spawn', e.name), caller: e.caller, rule: e.rule });
    }
  }
  const counts = md.running.filter(([t]) => t <= now);
  if (!counts.length) counts.push([0, 0]);
  const c = md.counts;
  return {
    rows, rejects, counts, cap: md.cap, more: md.more_runs,
    runs: c.started, rejected: c.rejected, finished: c.finished, peak: c.peak_running,
  };
}

function node(name, attributes, parent) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  if (parent) parent.appendChild(element);
  return element;
}

function drawTimeline(svg, m, now, total, onBar, departures) {
  svg.replaceChildren();
  const width = svg.clientWidth || 800;
  const left = 120;
  const scale = (t) => left + (total > 0 ? t / total : 0) * (width - left - 10);
  const rows = m.rows.slice(0, MAX_ROWS);
  const height = 24 + rows.length * 12 + 8;
  svg.setAttribute('height', String(height));
  const label = node('text', { x: 4, y: 12 }, svg);
  label.textContent = `rejected (${m.rejects.length})`;
  for (const reject of m.rejects) {
    const mark = node('line', { class: 'reject', x1: scale(reject.t), x2: scale(reject.t), y1: 3, y2: 15, 'data-reason': reject.reason }, svg);
    const title = node('title', {}, mark);
    title.textContent = `${reject.name}: rejected (${reject.reason}) ${reject.rule || ''}`;
  }
  rows.forEach((row, index) => {
    const y = 22 + index * 12;
    const group = node('g', { 'data-agent': row.id }, svg);
    const text = node('text', { x: 4, y: y + 9 }, group);
    text.textContent = row.name.length > 16 ? row.name.slice(0, 15) + '…' : row.name;
    if (!row.named) text.setAttribute('class', 'unnamed');
    for (const segment of row.segments) {
      const end = segment.to === null ? Math.max(segment.from, now) : segment.to;
      const x = scale(segment.from);
      const classes = ['bar', segment.mode === 'foreground' ? 'foreground' : '',
        segment.state ? 'state-' + segment.state : '', segment.to === null ? 'open' : ''];
      node('rect', { class: classes.join(' ').trim(), x, y: y + 1, width: Math.max(1.5, scale(end) - x), height: 9 }, group);
    }
    const title = node('title', {}, group);
    title.textContent = row.named ? `${row.name} (${row.id})` : `${row.id} (no name given)`;
    if (onBar) group.addEventListener('click', () => onBar(row.id));
  });
  drawDepartures(svg, rows, scale, width, departures || []);
  const more = Math.max(0, m.rows.length - MAX_ROWS) + (m.more || 0);
  if (more > 0) {
    const text = node('text', { x: 4, y: height - 2 }, svg);
    text.textContent = `… and ${plural(more, 'more run')}, not drawn (the first ${MAX_ROWS} are)`;
  }
  node('line', { class: 'now', x1: scale(now), x2: scale(now), y1: 0, y2: height }, svg);
}

// Each failed `expect:` entry the run shows (an imported session's departures from the
// documented behaviour), as the report marks it: a flag on its run's row (the rejection
// strip when it names no run drawn) with its rule, the text in its tooltip. The server
// places it (`event: expect`'s `at_us`, `agent`, `rule`); one without a time is not drawn.
function drawDepartures(svg, rows, scale, width, failures) {
  for (const failure of failures) {
    if (!failure || typeof failure.at_us !== 'number') continue;
    const index = typeof failure.agent === 'string' ? rows.findIndex((row) => row.id === failure.agent) : -1;
    const y = index >= 0 ? 22 + index * 12 : 3;
    const rule = typeof failure.rule === 'string' ? failure.rule : '';
    const x = scale(failure.at_us);
    const group = node('g', { class: 'departure', 'data-rule': rule, 'data-agent-row': index >= 0 ? failure.agent : '' }, svg);
    node('line', { x1: x, x2: x, y1: y, y2: y + 12 }, group);
    // Near the right edge (a departure at the session's end) the flag reads leftwards.
    const leftwards = x + 70 > width;
    const flag = node('text', { x: leftwards ? x - 3 : x + 2, y: y + 9, 'text-anchor': leftwards ? 'end' : 'start' }, group);
    flag.textContent = '⚑ ' + rule;
    const title = node('title', {}, group);
    title.textContent = `departed from the documented behaviour at ${clock(failure.at_us)}` +
      (rule ? ` (${rule})` : '') + `: expected ${failure.expected}; got ${failure.got}`;
  }
}

function drawRunning(svg, m, now, total) {
  svg.replaceChildren();
  const width = svg.clientWidth || 800;
  const left = 120;
  const height = 90;
  const peak = Math.max(1, m.cap || 0, m.peak);
  const x = (t) => left + (total > 0 ? t / total : 0) * (width - left - 10);
  const y = (n) => height - 8 - (n / peak) * (height - 20);
  // At most three points a pixel column (its highest, lowest and last count): a run of a
  // million changes draws as fast as one of a hundred.
  const parts = [];
  let last = 0;
  let column = null;
  let low = 0;
  let high = 0;
  const flush = () => {
    if (column === null) return;
    parts.push(parts.length ? `H${column}` : `M${column},${y(last)}`);
    if (high !== low) parts.push(`V${y(high)}V${y(low)}`);
    parts.push(`V${y(last)}`);
  };
  for (const [t, n] of m.counts) {
    const at = Math.round(x(t));
    if (at !== column) {
      flush();
      column = at;
      low = n;
      high = n;
    }
    low = Math.min(low, n);
    high = Math.max(high, n);
    last = n;
  }
  flush();
  const path = parts.join('') + `H${x(now)}`;
  node('path', { class: 'count', d: path }, svg);
  if (m.cap) node('line', { class: 'cap-line', x1: left, x2: width - 10, y1: y(m.cap), y2: y(m.cap) }, svg);
  const label = node('text', { x: 4, y: 14 }, svg);
  label.textContent = `running ${last}` + (m.cap ? ` / cap ${m.cap}` : '');
  const most = node('text', { x: 4, y: 28 }, svg);
  most.textContent = `at most ${m.peak}`;
  node('line', { class: 'now', x1: x(now), x2: x(now), y1: 0, y2: height }, svg);
}

function clock(us) {
  const ms = Math.floor(us / 1000);
  const pad = (n, w) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3600000), 2)}:${pad(Math.floor(ms / 60000) % 60, 2)}:` +
    `${pad(Math.floor(ms / 1000) % 60, 2)}.${pad(ms % 1000, 3)}`;
}

function render() {
  let m = { rows: [], rejects: [], counts: [[0, 0]], cap: null, finished: 0, peak: 0 };
  guarded('run model', $('timeline'), () => {
    m = play.model && play.done && !play.stepping
      ? fromModel(play.model, play.now, play.events) : model(play.events, play.shown);
  });
  const last = play.events.length ? play.events[play.events.length - 1].t_us : 0;
  const total = Math.max(play.done ? play.end : Math.max(last, play.now), 1);
  // After a run, its `expect:` failures where they happened.
  const departures = play.done && play.expect && Array.isArray(play.expect.failures) ? play.expect.failures : [];
  guarded('timeline', $('timeline'), () => drawTimeline($('timeline'), m, play.now, total, showAgent, departures));
  guarded('running count', $('running'), () => drawRunning($('running'), m, play.now, total));
  // What was drawn, for the tests that compare the page with the command line.
  Object.assign($('timeline').dataset, {
    runs: String(m.runs === undefined ? m.rows.length : m.runs),
    rejected: String(m.rejected === undefined ? m.rejects.length : m.rejected),
    finished: String(m.finished), peak: String(m.peak),
    end: play.done ? String(play.end) : '',
  });
  $('clock').textContent = `${clock(play.now)}` + (play.done ? ` of ${clock(play.end)}` : '') +
    `  ·  ${play.shown} of ${plural(play.events.length, 'event')} shown` +
    (play.paused ? '  ·  paused' : '');
  guarded('narration', $('narration'), renderNarration);
}

// Scrolls `list` (only it: the page stays where the reader has it) so that `item` shows.
function showInList(list, item) {
  const top = item.offsetTop - list.offsetTop;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (top + item.offsetHeight > list.scrollTop + list.clientHeight) {
    list.scrollTop = top + item.offsetHeight - list.clientHeight;
  }
}

function renderNarration() {
  const list = $('narration');
  const visible = play.narration.slice(0, MAX_LINES).filter((item) => item.t <= play.now || (play.done && !play.paused));
  const listed = Math.min(play.narration.length, MAX_LINES);
  if ((play.narration.length > MAX_LINES || play.narrationCut) && play.done) {
    $('narration-more').textContent = `The narration is listed here up to ${MAX_LINES} lines; ` +
      '`subsim run FILE` prints all of it.';
  }
  while (list.children.length < listed) {
    const item = play.narration[list.children.length];
    const li = document.createElement('li');
    li.textContent = item.text;
    li.dataset.t = String(item.t);
    if (item.text.startsWith('──')) li.className = 'heading';
    li.addEventListener('click', () => showLine(item));
    list.appendChild(li);
  }
  let current = null;
  [...list.children].forEach((li, index) => {
    const shown = index < visible.length || play.narration[index].t <= play.now;
    li.hidden = !shown && !play.done;
    li.classList.toggle('later', !shown);
    li.classList.remove('current');
    if (shown) current = li;
  });
  if (current) current.classList.add('current');
  if (!play.paused && current && play.streaming) showInList(list, current);
}

// ---- the panel at the instant, and what a click explains ----------------------------------

let panelCount = 0;
let panelAt = -1;
let panelLast = 0;
function throttledPanel() {
  if (performance.now() - panelLast > 1000) fetchPanel();
}

async function fetchPanel() {
  const at = Math.floor(play.now);
  if (at === panelAt) return;
  panelAt = at;
  panelLast = performance.now();
  const mine = ++panelCount;
  const { status, answer } = await postJson('/api/panel', { at_us: at });
  if (mine !== panelCount) return;
  $('panel').textContent = status === 200 ? answer.text
    : (answer.error || (answer.diagnostics ? 'the scenario has problems' : `panel: ${status}`));
}

function rulesIn(text) {
  const found = text.match(/\b[A-Z]+-\d+\b/g) || [];
  return [...new Set(found)];
}

async function explainInto(container, rules) {
  for (const rule of rules.slice(0, 3)) {
    const response = await fetch('/api/explain/' + encodeURIComponent(rule) + '?problems=200');
    if (statusOf(response) !== 200) continue;
    const answer = await response.json();
    const pre = document.createElement('pre');
    pre.textContent = answer.text;
    container.appendChild(pre);
  }
}

// Where a line's numbers came from (issue #32): the server's model's draws (`event:
// model`) that start or end at the line's instant, for a run the line names (its first
// line's words; a group line `a … z (n)` names them all; a retry's run is `main`).
function drawsOf(item) {
  const draws = (play.model && play.model.draws) || [];
  let head = item;
  for (let i = play.narration.indexOf(item); i > 0 && /^\s/.test(head.text); i--) head = play.narration[i - 1];
  const words = ' ' + head.text.replace(/[^\w.-]+/g, ' ') + ' ';
  return draws.filter((d) => (d.t_us === item.t || d.until_us === item.t)
    && (words.includes(' ' + (d.label === null ? 'main' : d.label) + ' ') || head.text.includes('…')));
}

// Each draw in the model's words, with when what it timed ran; `none` when there is none.
function showDraws(container, draws, none) {
  if (!play.model || !Array.isArray(play.model.draws)) return;
  const head = document.createElement('p');
  head.className = 'draws-head';
  if (!draws.length) {
    head.textContent = play.model.draws.length ? none
      : 'Nothing in this run was drawn from a distribution: every duration in it is fixed by the scenario.';
    container.appendChild(head);
    return;
  }
  head.textContent = 'Where its numbers came from:';
  container.appendChild(head);
  const list = document.createElement('ul');
  list.className = 'draws';
  for (const draw of draws) {
    const li = document.createElement('li');
    li.textContent = `${draw.text} (${clock(draw.t_us)} → ${clock(draw.until_us)})`;
    list.appendChild(li);
  }
  container.appendChild(list);
  if (play.model.more_draws) {
    const more = document.createElement('p');
    more.className = 'draws-head';
    more.textContent = `… and ${plural(play.model.more_draws, 'later draw')} the model did not keep: ` +
      '`subsim run --detail full` says them all';
    container.appendChild(more);
  }
}

function showLine(item) {
  const detail = $('detail');
  detail.replaceChildren();
  const line = document.createElement('p');
  line.textContent = item.text;
  detail.appendChild(line);
  showDraws(detail, drawsOf(item),
    'No duration drawn from a distribution starts or ends here: the times of this decision are fixed by the scenario.');
  const rules = rulesIn(item.text);
  const decisions = play.events.filter((e) => e.t_us === item.t && e.rule && rules.includes(e.rule));
  if (decisions.length) {
    const pre = document.createElement('pre');
    pre.textContent = 'decision: ' + JSON.stringify(decisions[0], null, 1);
    detail.appendChild(pre);
  }
  if (play.done) {
    $('scrubber').value = String(item.t);
    scrub();
  }
  explainInto(detail, rules);
}

function showAgent(id) {
  const detail = $('detail');
  detail.replaceChildren();
  const mine = play.events.filter((e) => e.agent === id);
  const started = mine.find((e) => e.kind === 'agent_started');
  const head = document.createElement('p');
  head.textContent = started && started.name ? `${started.name} (${id}): ${plural(mine.length, 'event')}`
    : `${id}: ${plural(mine.length, 'event')}`;
  detail.appendChild(head);
  showDraws(detail, ((play.model && play.model.draws) || []).filter((d) => d.agent === id),
    'No duration of this run was drawn from a distribution: its times are fixed by the scenario.');
  if (started) {
    const pre = document.createElement('pre');
    pre.textContent = 'decision: ' + JSON.stringify(started, null, 1);
    detail.appendChild(pre);
  }
  const rules = [...new Set(mine.map((e) => e.rule).filter(Boolean))];
  explainInto(detail, rules);
}

// ---- compare ---------------------------------------------------------------------------------

async function compare() {
  const other = controls();
  $('comparison').hidden = false;
  delete $('comparison').dataset.done;
  $('parting').textContent = 'comparing…';
  const { status, answer } = await postJson('/api/compare', null,
    JSON.stringify({ scenario: $('source').value, set: {}, other }));
  if (status !== 200) {
    $('parting').textContent = answer.error
      || (answer.diagnostics || []).map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`).join('\n');
    return;
  }
  $('parting').textContent = answer.text;
  for (const [side, set] of [['left', {}], ['right', other]]) {
    const events = [];
    const request = JSON.stringify({ scenario: $('source').value, set, speed: 'instant' });
    const response = await fetch('/api/run?problems=200', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: request });
    if (statusOf(response) !== 200) continue;
    const text = await response.text();
    for (const block of text.split('\n\n')) {
      const { event, data } = parseBlock(block);
      if (event === 'message' && data) events.push(JSON.parse(data));
    }
    let end = 1;
    for (const e of events) if (e.kind !== 'panel_changed') end = Math.max(end, e.t_us);
    guarded('timeline', $('timeline-' + side),
      () => drawTimeline($('timeline-' + side), model(events, events.length), end, end, null));
  }
  $('comparison').dataset.done = 'true';
  $('comparison').scrollIntoView({ block: 'nearest' });
}

// ---- wiring ----------------------------------------------------------------------------------

async function start() {
  $('source').addEventListener('input', () => { drawGutter(null); markPicker(); scheduleCheck(); });
  $('source').addEventListener('scroll', () => { $('gutter').scrollTop = $('source').scrollTop; });
  for (const input of document.querySelectorAll('#controls [data-path]')) {
    input.addEventListener('change', () => { showSets(); scheduleCheck(); });
    input.addEventListener('input', showSets);
  }
  $('picker').addEventListener('change', () => { if ($('picker').value) pick($('picker').value); });
  $('share-button').addEventListener('click', share);
  $('run').addEventListener('click', () => run());
  $('pause').addEventListener('click', pause);
  $('step').addEventListener('click', stepOnce);
  $('compare').addEventListener('click', compare);
  $('scrubber').addEventListener('input', scrub);
  showSets();
  await loadPicker();
  if (!fromFragment()) await load('scenarios/demo.yaml');
  document.body.dataset.ready = 'true';
  // Drawn on load, without waiting for Run: the demo, or the shared scenario.
  await run({ instant: true });
}

start();
