// The subsim playground's page script. It only ever sets textContent and attributes, never
// markup, so nothing a scenario says is read as HTML. It talks to the server's API only
// (docs/playground.md); it loads nothing else.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const MAX_ROWS = 400;

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
  frame: 0,
};

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
  } else {
    setStatus(answer.error || `check answered ${status}`);
  }
}

// ---- the picker and the share link ------------------------------------------------------

async function loadPicker() {
  const response = await fetch('/api/scenarios');
  const list = await response.json();
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
}

async function pick(path) {
  const response = await fetch('/api/scenario/' + path);
  if (!response.ok) return;
  setSource(await response.text());
  const option = [...$('picker').options].find((o) => o.value === path);
  $('picker').value = path;
  $('description').textContent = option ? option.dataset.description : '';
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
    setSource(String(shared.scenario || ''));
    $('description').textContent = 'A shared scenario.';
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
    try { answer = await response.json(); } catch (_) { /* not JSON */ }
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

async function run() {
  if (play.controller) play.controller.abort();
  Object.assign(play, {
    events: [], narration: [], shown: 0, now: 0, paused: false, streaming: true, done: false,
    summary: null, limit: null, controller: new AbortController(), started: performance.now(),
  });
  const speed = $('speed').value;
  play.speed = speed === 'instant' ? null : Number(speed);
  $('narration').replaceChildren();
  $('scrubber').disabled = true;
  $('pause').disabled = false;
  $('pause').textContent = 'Pause';
  $('step').disabled = false;
  setStatus('running…');
  tick();
  let result;
  try {
    result = await stream({ speed: play.speed === null ? 'instant' : play.speed, narration: true },
      receive, play.controller.signal);
  } catch (error) {
    if (error.name === 'AbortError') return;
    setStatus('the run stopped: ' + error.message);
    play.streaming = false;
    return;
  }
  play.streaming = false;
  // A stream that ended without `end`: stopped by --max-run-time (`limit`) or a failure.
  if (result.status === 200 && !play.done) setStatus(play.limit || 'the run stopped before its end');
  if (result.status === 422) {
    showProblems(result.answer.diagnostics || []);
    setStatus('the scenario has problems: see below the editor');
  } else if (result.status !== 200) {
    setStatus(result.answer.error || `the server answered ${result.status}`);
  }
}

function receive(event, data) {
  if (event === 'message') {
    play.events.push(JSON.parse(data));
    if (!play.paused) play.shown = play.events.length;
  } else if (event === 'narration') {
    const told = JSON.parse(data);
    for (const line of told.text.split('\n')) {
      if (line.trim() !== '') play.narration.push({ t: told.t_us, text: line });
    }
  } else if (event === 'limit') {
    play.limit = JSON.parse(data).message;
  } else if (event === 'end') {
    play.summary = JSON.parse(data);
    finish();
  }
}

function finish() {
  play.done = true;
  const end = play.events.length ? play.events[play.events.length - 1].t_us : 0;
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
  const s = play.summary;
  let text = `done: ${s.events} events, ${s.spawns.started} run${s.spawns.started === 1 ? '' : 's'} started, ` +
    `${s.spawns.rejected} rejected (${s.spawns.rejected_by_reason.concurrent_limit} at the cap), ` +
    `peak ${s.running.peak} running`;
  if (play.limit) text += ' — ' + play.limit;
  setStatus(text);
  render();
  fetchPanel();
}

function tick() {
  cancelAnimationFrame(play.frame);
  const step = () => {
    if (!play.paused && play.streaming) {
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
    play.shown = play.events.length;
    if (play.done) play.now = play.events.length ? play.events[play.events.length - 1].t_us : 0;
    tick();
  }
  render();
  fetchPanel();
}

// Shows events up to and including the next decision (an event that cites a rule).
function stepOnce() {
  if (!play.paused) pause();
  let next = play.shown;
  while (next < play.events.length && !play.events[next].rule) next++;
  play.shown = Math.min(play.events.length, next + 1);
  play.now = play.shown ? play.events[play.shown - 1].t_us : 0;
  if (play.done) $('scrubber').value = String(play.now);
  $('step').disabled = play.done && play.shown >= play.events.length;
  render();
  fetchPanel();
  const current = document.querySelector('#narration li.current');
  if (current) current.scrollIntoView({ block: 'nearest' });
}

function scrub() {
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

function model(events, count) {
  const rows = new Map();
  const rejects = [];
  const counts = [[0, 0]];
  let cap = null;
  for (let index = 0; index < count; index++) {
    const e = events[index];
    if (e.kind === 'session_started') cap = e.cap;
    if (e.kind === 'agent_started') {
      rows.set(e.agent, { id: e.agent, name: e.name, segments: [{ from: e.t_us, to: null, mode: e.mode }] });
    } else if (e.kind === 'agent_resumed') {
      const row = rows.get(e.agent);
      if (row) row.segments.push({ from: e.t_us, to: null, mode: e.mode });
    } else if (e.kind === 'agent_finished') {
      const row = rows.get(e.agent);
      const last = row && row.segments[row.segments.length - 1];
      if (last && last.to === null) last.to = e.t_us;
    } else if (e.kind === 'spawn_rejected') {
      rejects.push({ t: e.t_us, reason: e.reason, name: e.name || e.agent_type, caller: e.caller, rule: e.rule });
    }
    if (typeof e.running === 'number') counts.push([e.t_us, e.running]);
  }
  return { rows: [...rows.values()], rejects, counts, cap };
}

function node(name, attributes, parent) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  if (parent) parent.appendChild(element);
  return element;
}

function drawTimeline(svg, m, now, total, onBar) {
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
    for (const segment of row.segments) {
      const end = segment.to === null ? Math.max(segment.from, now) : segment.to;
      const x = scale(segment.from);
      const classes = ['bar', segment.mode === 'foreground' ? 'foreground' : '', segment.to === null ? 'open' : ''];
      node('rect', { class: classes.join(' ').trim(), x, y: y + 1, width: Math.max(1.5, scale(end) - x), height: 9 }, group);
    }
    const title = node('title', {}, group);
    title.textContent = `${row.name} (${row.id})`;
    if (onBar) group.addEventListener('click', () => onBar(row.id));
  });
  if (m.rows.length > MAX_ROWS) {
    const more = node('text', { x: 4, y: height - 2 }, svg);
    more.textContent = `… and ${m.rows.length - MAX_ROWS} more runs`;
  }
  node('line', { class: 'now', x1: scale(now), x2: scale(now), y1: 0, y2: height }, svg);
}

function drawRunning(svg, m, now, total) {
  svg.replaceChildren();
  const width = svg.clientWidth || 800;
  const left = 120;
  const height = 90;
  const peak = Math.max(1, m.cap || 0, ...m.counts.map((c) => c[1]));
  const x = (t) => left + (total > 0 ? t / total : 0) * (width - left - 10);
  const y = (n) => height - 8 - (n / peak) * (height - 20);
  let path = '';
  let last = 0;
  for (const [t, n] of m.counts) {
    path += path ? `H${x(t)}V${y(n)}` : `M${x(t)},${y(n)}`;
    last = n;
  }
  path += `H${x(now)}`;
  node('path', { class: 'count', d: path }, svg);
  if (m.cap) node('line', { class: 'cap-line', x1: left, x2: width - 10, y1: y(m.cap), y2: y(m.cap) }, svg);
  const label = node('text', { x: 4, y: 14 }, svg);
  label.textContent = `running ${last}` + (m.cap ? ` / cap ${m.cap}` : '');
  node('line', { class: 'now', x1: x(now), x2: x(now), y1: 0, y2: height }, svg);
}

function clock(us) {
  const ms = Math.floor(us / 1000);
  const pad = (n, w) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3600000), 2)}:${pad(Math.floor(ms / 60000) % 60, 2)}:` +
    `${pad(Math.floor(ms / 1000) % 60, 2)}.${pad(ms % 1000, 3)}`;
}

function render() {
  const m = model(play.events, play.shown);
  const last = play.events.length ? play.events[play.events.length - 1].t_us : 0;
  const total = Math.max(play.done ? last : Math.max(last, play.now), 1);
  drawTimeline($('timeline'), m, play.now, total, showAgent);
  drawRunning($('running'), m, play.now, total);
  $('clock').textContent = `${clock(play.now)}  ·  ${play.shown} of ${play.events.length} events shown` +
    (play.paused ? '  ·  paused' : '');
  renderNarration();
}

function renderNarration() {
  const list = $('narration');
  const visible = play.narration.filter((item) => item.t <= play.now || (play.done && !play.paused));
  while (list.children.length < play.narration.length) {
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
  if (!play.paused && current && play.streaming) current.scrollIntoView({ block: 'nearest' });
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

function showLine(item) {
  const detail = $('detail');
  detail.replaceChildren();
  const line = document.createElement('p');
  line.textContent = item.text;
  detail.appendChild(line);
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
  head.textContent = started ? `${started.name} (${id}): ${mine.length} events` : id;
  detail.appendChild(head);
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
    const end = events.length ? events[events.length - 1].t_us : 1;
    drawTimeline($('timeline-' + side), model(events, events.length), end, end, null);
  }
  $('comparison').dataset.done = 'true';
  $('comparison').scrollIntoView({ block: 'nearest' });
}

// ---- wiring ----------------------------------------------------------------------------------

async function start() {
  $('source').addEventListener('input', () => { drawGutter(null); scheduleCheck(); });
  $('source').addEventListener('scroll', () => { $('gutter').scrollTop = $('source').scrollTop; });
  for (const input of document.querySelectorAll('#controls [data-path]')) {
    input.addEventListener('change', () => { showSets(); scheduleCheck(); });
    input.addEventListener('input', showSets);
  }
  $('picker').addEventListener('change', () => pick($('picker').value));
  $('share-button').addEventListener('click', share);
  $('run').addEventListener('click', run);
  $('pause').addEventListener('click', pause);
  $('step').addEventListener('click', stepOnce);
  $('compare').addEventListener('click', compare);
  $('scrubber').addEventListener('input', scrub);
  showSets();
  await loadPicker();
  if (!fromFragment()) await pick('scenarios/demo.yaml');
  document.body.dataset.ready = 'true';
}

start();
