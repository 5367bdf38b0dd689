// The sidebar webview: renders the host's state, sends the user's actions back. Browser code only.
// The form is built once and kept (so typing is never interrupted by a state update); the lists
// below it are rebuilt from each state, restoring keyboard focus by key.
import type { SidebarEndpoint, SidebarHostMessage, SidebarRun, SidebarState, SidebarWebviewMessage, SidebarWorkload } from '../../src/shared/protocol';
import { option as optionSpec } from '../../src/jobs/options';
import { formatMs as ms } from '../../src/present/units';
import { badge, button, divider, dropdown, numberField, option, registerToolkit, setDisabled, spinner } from './toolkit';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

const vscode = acquireVsCodeApi();

function post<T extends SidebarWebviewMessage['type']>(type: T, body: Omit<Extract<SidebarWebviewMessage, { type: T }>, 'type'>): void {
  vscode.postMessage({ type, ...body });
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

registerToolkit();

const app = document.getElementById('app')!;
let state: SidebarState = JSON.parse(document.body.dataset.state ?? '{}') as SidebarState;
let selectedEndpoint = (vscode.getState() as { endpoint?: string } | undefined)?.endpoint ?? '';
let compareFirst: string | undefined;

// ---- the run form (built once) ----
const runSection = el('section', 'section');
runSection.setAttribute('aria-labelledby', 'run-title');
const runTitle = el('h2', 'title', 'Run');
runTitle.id = 'run-title';
const endpointSelect = dropdown();
endpointSelect.id = 'endpoint-select';
endpointSelect.setAttribute('aria-label', 'Endpoint');
/** The form's fields: their limits are the options table's, as the CLI and the settings have them. */
const FIELDS = { concurrency: 'Concurrency', requests: 'Requests', maxTokens: 'Max tokens', promptTokens: 'Prompt tokens' } as const;
const limits = (key: keyof typeof FIELDS): [number, number] => [optionSpec(key).min ?? 1, optionSpec(key).max ?? Number.MAX_SAFE_INTEGER];
const fields = Object.fromEntries(
  Object.entries(FIELDS).map(([key, label]) => [key, numberField(label, 1, ...limits(key as keyof typeof FIELDS))]),
) as Record<keyof typeof FIELDS, ReturnType<typeof numberField>>;
for (const [k, f] of Object.entries(fields)) f.id = `field-${k}`;
const runButton = button('Run', 'primary', 'Run the workload against the selected endpoint');
runButton.id = 'run-button';
const cancelButton = button('Cancel', 'secondary', 'Cancel the run in progress');
cancelButton.id = 'cancel-button';
const runStatus = el('div', 'run-status');
runStatus.id = 'run-status';
runStatus.setAttribute('role', 'status');
const formError = el('div', 'error');
formError.setAttribute('role', 'alert');
const grid = el('div', 'grid');
for (const f of Object.values(fields)) grid.append(f);
const actions = el('div', 'actions');
actions.append(runButton, cancelButton);
const endpointLabel = el('label', 'label', 'Endpoint');
endpointLabel.setAttribute('for', 'endpoint-select');
runSection.append(runTitle, endpointLabel, endpointSelect, grid, actions, runStatus, formError);

endpointSelect.addEventListener('change', () => {
  selectedEndpoint = endpointSelect.value;
  vscode.setState({ endpoint: selectedEndpoint });
});

function readWorkload(): SidebarWorkload | string {
  const out: Record<string, number> = {};
  for (const [k, f] of Object.entries(fields)) {
    const n = Number(f.value);
    const [min, max] = limits(k as keyof typeof FIELDS);
    if (!Number.isInteger(n) || n < min || n > max) return `${f.textContent}: enter a whole number from ${min} to ${max}`;
    out[k] = n;
  }
  return out as unknown as SidebarWorkload;
}

runButton.addEventListener('click', () => {
  const w = readWorkload();
  if (typeof w === 'string') { formError.textContent = w; return; }
  formError.textContent = '';
  const endpointId = endpointSelect.value || selectedEndpoint;
  if (!endpointId) { formError.textContent = 'Pick an endpoint first'; return; }
  post('run', { endpointId, workload: w });
});
cancelButton.addEventListener('click', () => post('cancelRun', {}));

// ---- the lists (rebuilt from state) ----
const endpointsSection = el('section', 'section');
const serverSection = el('section', 'section');
const runsSection = el('section', 'section');
const problemsSection = el('section', 'section problems');
app.append(runSection, divider(), endpointsSection, divider(), serverSection, divider(), runsSection, problemsSection);

let formInitialized = false;
let lastOptions = '';

function renderForm(s: SidebarState): void {
  if (!formInitialized) {
    fields.concurrency.value = String(s.workload.concurrency);
    fields.requests.value = String(s.workload.requests);
    fields.maxTokens.value = String(s.workload.maxTokens);
    fields.promptTokens.value = String(s.workload.promptTokens);
    formInitialized = true;
  }
  const options = JSON.stringify(s.endpoints.map((e) => [e.id, e.name]));
  if (options !== lastOptions) {
    lastOptions = options;
    endpointSelect.replaceChildren(...s.endpoints.map((e) => option(e.id, e.restricted ? `${e.name} (untrusted)` : e.name)));
    const keep = s.endpoints.some((e) => e.id === selectedEndpoint) ? selectedEndpoint : s.endpoints[0]?.id ?? '';
    selectedEndpoint = keep;
    // The toolkit dropdown picks its value once its options are upgraded.
    queueMicrotask(() => { endpointSelect.value = keep; });
  }
  const r = s.running;
  setDisabled(runButton, Boolean(r));
  cancelButton.hidden = !r;
  runStatus.replaceChildren();
  if (r) {
    const ring = spinner();
    ring.setAttribute('aria-hidden', 'true');
    const total = r.total !== undefined ? `${r.finished}/${r.total}` : `${r.finished} done`;
    runStatus.append(ring, el('span', undefined, `${r.label}: ${total}${r.ttftP50Ms !== undefined ? ` · TTFT p50 ${ms(r.ttftP50Ms)}` : ''}`));
  }
}

function reach(e: SidebarEndpoint): HTMLElement {
  const dot = el('span', `dot ${e.reachable ?? 'unknown'}`);
  const label = e.reachable === 'yes' ? 'reachable' : e.reachable === 'no' ? 'unreachable' : e.reachable === 'checking' ? 'checking' : 'not checked';
  dot.setAttribute('role', 'img');
  dot.setAttribute('aria-label', label);
  dot.title = label;
  return dot;
}

function renderEndpoints(s: SidebarState): void {
  const title = el('h2', 'title', 'Endpoints');
  const list = el('ul', 'list');
  list.setAttribute('aria-label', 'Endpoints');
  for (const e of s.endpoints.filter((x) => x.id !== 'local')) {
    const li = el('li', 'item');
    li.dataset.key = e.id;
    const head = el('div', 'row');
    head.append(reach(e), el('span', 'name', e.name));
    if (e.restricted) head.append(badge('untrusted'));
    if (e.hasKey) head.append(badge('key'));
    const meta = el('div', 'meta', [e.url, e.model].filter(Boolean).join(' · '));
    const stats = el('div', 'meta', e.lastTtftP50Ms !== undefined ? `TTFT p50 ${ms(e.lastTtftP50Ms)} · TPOT p50 ${ms(e.lastTpotP50Ms)}` : 'no runs yet');
    li.append(head, meta, stats);
    if (!e.restricted) {
      const key = button(e.hasKey ? 'Change key' : 'Set key', 'secondary', `Set the API key of ${e.name}`);
      key.dataset.focus = `key:${e.id}`;
      key.addEventListener('click', () => post('setApiKey', { endpointId: e.id }));
      const row = el('div', 'actions');
      row.append(key);
      li.append(row);
    }
    list.append(li);
  }
  if (!list.childElementCount) list.append(el('li', 'empty', 'No endpoints configured yet.'));
  const add = button('Add endpoint', 'secondary');
  add.dataset.focus = 'add-endpoint';
  add.addEventListener('click', () => post('addEndpoint', {}));
  const check = button('Check reachability', 'secondary');
  check.dataset.focus = 'check-endpoints';
  check.addEventListener('click', () => post('checkEndpoints', {}));
  const row = el('div', 'actions');
  row.append(add, check);
  endpointsSection.replaceChildren(title, list, row);
}

let parallelValue: string | undefined;
function renderServer(s: SidebarState): void {
  const ls = s.localServer;
  const title = el('h2', 'title', 'Local server');
  const status = el('div', 'row');
  status.id = 'local-server-state';
  status.append(el('span', `dot ${ls.state === 'running' ? 'yes' : ls.state === 'error' ? 'no' : 'unknown'}`), el('span', 'name', ls.state));
  if (ls.state === 'starting' || ls.state === 'stopping') status.append(spinner());
  const meta = el('div', 'meta', ls.state === 'running' ? `${ls.model ?? ''} · port ${ls.port ?? ''}` : `model: ${ls.source}`);
  const [minSlots, maxSlots] = [optionSpec('parallel').min ?? 1, optionSpec('parallel').max ?? 256];
  const parallel = numberField('Parallel slots', Number(parallelValue ?? ls.parallel), minSlots, maxSlots);
  parallel.addEventListener('input', () => { parallelValue = parallel.value; });
  const row = el('div', 'actions');
  if (ls.state === 'running' || ls.state === 'starting') {
    const stop = button('Stop', 'secondary', 'Stop the local server');
    stop.dataset.focus = 'server-toggle';
    setDisabled(stop, ls.state === 'starting');
    stop.addEventListener('click', () => post('stopLocalServer', {}));
    row.append(stop);
  } else {
    const start = button('Start', 'secondary', 'Start the local server');
    start.dataset.focus = 'server-toggle';
    setDisabled(start, ls.state === 'stopping');
    start.addEventListener('click', () => {
      const p = Number(parallel.value);
      post('startLocalServer', { parallel: Number.isInteger(p) && p >= minSlots && p <= maxSlots ? p : ls.parallel });
    });
    row.append(parallel, start);
  }
  // starts its own servers (one per chunk size), so it does not need this one running
  const dial = button('Compare prefill chunks', 'secondary', 'The same mixed workload at two prefill chunk sizes, side by side (LLM Profiler: Compare prefill chunk sizes)');
  dial.dataset.focus = 'prefill-dial';
  setDisabled(dial, Boolean(s.running));
  dial.addEventListener('click', () => post('comparePrefillChunks', {}));
  row.append(dial);
  serverSection.replaceChildren(title, status, meta, ...(ls.message ? [el('div', 'error', ls.message)] : []), row);
}

function runRow(r: SidebarRun): HTMLElement {
  const li = el('li', 'item');
  li.dataset.key = r.id;
  const when = new Date(r.startedAt);
  const head = el('div', 'row');
  head.append(el('span', 'name', r.endpointName));
  if (r.cancelled) head.append(badge('cancelled'));
  if (r.failed) head.append(badge(`${r.failed} failed`));
  const meta = el('div', 'meta', `${Number.isNaN(when.getTime()) ? r.startedAt : when.toLocaleString()}${r.network?.length ? ` · ${r.network.join(' · ')}` : ''} · TTFT p50 ${ms(r.ttftP50Ms)} · TPOT p50 ${ms(r.tpotP50Ms)}${r.sent ? ` · ${r.sent}` : ''}`);
  const open = button('Open', 'secondary', `Open the run of ${r.endpointName}`);
  open.dataset.focus = `open:${r.id}`;
  open.addEventListener('click', () => post('openRun', { runId: r.id }));
  const compare = button(compareFirst === r.id ? 'Compare with…' : compareFirst ? 'Compare' : 'Compare', compareFirst === r.id ? 'primary' : 'secondary', 'Compare two runs: pick this one, then another');
  compare.dataset.focus = `compare:${r.id}`;
  compare.setAttribute('aria-pressed', String(compareFirst === r.id));
  compare.addEventListener('click', () => {
    if (!compareFirst) { compareFirst = r.id; render(); return; }
    if (compareFirst === r.id) { compareFirst = undefined; render(); return; }
    post('compareRuns', { runId: compareFirst, otherId: r.id });
    compareFirst = undefined;
    render();
  });
  const del = button('Delete', 'secondary', `Delete the run of ${r.endpointName}`);
  del.dataset.focus = `delete:${r.id}`;
  del.addEventListener('click', () => post('deleteRun', { runId: r.id }));
  const row = el('div', 'actions');
  row.append(open, compare, del);
  li.append(head, meta, row);
  return li;
}

function renderRuns(s: SidebarState): void {
  const title = el('h2', 'title', 'Recent runs');
  const list = el('ul', 'list');
  list.id = 'runs-list';
  list.setAttribute('aria-label', 'Recent runs');
  for (const r of s.runs) list.append(runRow(r));
  if (!s.runs.length) list.append(el('li', 'empty', 'No runs yet.'));
  const hint = compareFirst ? [el('div', 'meta', 'Pick a second run to compare with.')] : [];
  runsSection.replaceChildren(title, ...hint, list);
}

function renderProblems(s: SidebarState): void {
  if (!s.problems.length) { problemsSection.replaceChildren(); return; }
  const list = el('ul', 'list');
  for (const p of s.problems) list.append(el('li', 'error', p));
  problemsSection.replaceChildren(el('h2', 'title', 'Problems'), list);
}

function render(): void {
  const focusKey = (document.activeElement as HTMLElement | null)?.dataset?.focus;
  renderForm(state);
  renderEndpoints(state);
  renderServer(state);
  renderRuns(state);
  renderProblems(state);
  if (focusKey) (app.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`) as HTMLElement | null)?.focus();
}

window.addEventListener('message', (ev: MessageEvent<SidebarHostMessage>) => {
  const m = ev.data;
  switch (m.type) {
    case 'state':
      state = m.state;
      render();
      break;
  }
});

render();
post('ready', {});
