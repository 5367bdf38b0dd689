// The sidebar webview: renders the host's state, sends the user's actions back. Browser code only.
// The form is built once and kept (so typing is never interrupted by a state update); the lists
// below it are rebuilt from each state, restoring keyboard focus by key. Status lines are their own
// small live regions: a redraw is never announced as a whole.
import type { SidebarEndpoint, SidebarHostMessage, SidebarRun, SidebarState, SidebarWebviewMessage, SidebarWorkload } from '../../src/shared/protocol';
import { option as optionSpec } from '../../src/jobs/options';
import { formatMs as ms } from '../../src/present/units';
import { clockFromAttribute, clockTime } from '../../src/present/timeText';
import { badge, button, divider, numberField, option, select, setDisabled, spinner } from './controls';
import { BASE_FIELDS, TrafficForm } from './trafficForm';

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

const app = document.getElementById('app')!;
let state: SidebarState = JSON.parse(document.body.dataset.state ?? '{}') as SidebarState;
/** The host's locale and zone: a time said here reads as the host's run names say it (src/present/timeText.ts). */
const clock = clockFromAttribute(document.body.dataset.clock);
/**
 * What this view keeps across being hidden and shown again (VS Code discards a hidden view's page
 * unless it is retained) and across reloads: the endpoint the user picked, the last `select` applied,
 * and every field of the run form as typed, by the control's id.
 */
interface SavedState { readonly endpoint?: string; readonly selectSeq?: number; readonly form?: Readonly<Record<string, string>> }
const saved = vscode.getState() as SavedState | undefined;
let pickedEndpoint = saved?.endpoint;
let selectedEndpoint = pickedEndpoint ?? '';
/** The host's last `select` request applied (after Add or Edit endpoint): kept, so that a reloaded view does not apply it again over a later pick. */
let selectSeq = saved?.selectSeq ?? 0;
/** The run form's fields as typed, by id (the controls of the form's section: its selects and inputs, never a button). */
let formValues: Record<string, string> | undefined = saved?.form ? { ...saved.form } : undefined;
const remember = () => vscode.setState({ endpoint: pickedEndpoint, selectSeq, ...(formValues ? { form: formValues } : {}) } satisfies SavedState);
let compareFirst: string | undefined;

// ---- the run form (built once) ----
const runSection = el('section', 'section');
runSection.setAttribute('aria-labelledby', 'run-title');
const runTitle = el('h2', 'title', 'Run');
runTitle.id = 'run-title';
const endpointSelect = select();
endpointSelect.id = 'endpoint-select';
const endpointLabel = el('label', 'label', 'Endpoint');
endpointLabel.htmlFor = 'endpoint-select';
const endpointHint = el('div', 'meta hint');
endpointHint.id = 'endpoint-hint';
/** The form's fields: their limits are the options table's, as the CLI and the settings have them. */
const FIELDS = { concurrency: 'Concurrency', requests: 'Requests', maxTokens: 'Max tokens', promptTokens: 'Prompt tokens' } as const;
type FieldKey = keyof typeof FIELDS;
const limits = (key: FieldKey): [number, number] => [optionSpec(key).min ?? 1, optionSpec(key).max ?? Number.MAX_SAFE_INTEGER];
const fields = Object.fromEntries(
  Object.entries(FIELDS).map(([key, label]) => [key, numberField(key, label, 1, ...limits(key as FieldKey))]),
) as Record<FieldKey, ReturnType<typeof numberField>>;
/** Conversations, a trace or a ramp: the Workload picker and its own fields (trafficForm.ts). */
const traffic = new TrafficForm((purpose) => post('pickFile', { purpose }));
const runButton = button('Run', 'primary');
runButton.id = 'run-button';
runButton.title = 'Run the workload against the selected endpoint';
const cancelButton = button('Cancel', 'secondary', 'Cancel the run in progress');
cancelButton.id = 'cancel-button';
const runStatus = el('div', 'run-status');
runStatus.id = 'run-status';
runStatus.setAttribute('role', 'status');
const formError = el('div', 'error');
formError.id = 'form-error';
formError.setAttribute('role', 'alert');
const grid = el('div', 'grid');
// the traffic's own fields first (shown for its kind only), then those of the form's own that go with it
grid.append(...traffic.wraps);
for (const f of Object.values(fields)) grid.append(f.wrap);
const actions = el('div', 'actions');
actions.append(runButton, cancelButton);
const kindRow = el('div', 'kind-row');
kindRow.append(traffic.kindField.wrap);
runSection.append(runTitle, endpointLabel, endpointSelect, endpointHint, kindRow, grid, actions, runStatus, formError);

/** Shows the fields of the workload picked: the traffic's own, and those of the form's own that go with it. */
function applyKind(): void {
  const kind = traffic.show();
  const used = usedFields();
  for (const k of Object.keys(FIELDS) as FieldKey[]) fields[k].wrap.hidden = !used.includes(k);
  // a conversation's concurrency counts sessions in flight (each sends its next turn when its last reply ended)
  fields.concurrency.wrap.querySelector('label')!.textContent = kind === 'chat' || kind === 'dataset' ? 'Sessions in flight' : FIELDS.concurrency;
  fields.requests.wrap.querySelector('label')!.textContent = kind === 'sweep' ? 'Requests per point' : FIELDS.requests;
}

/** The form's own fields the workload picked uses (a prompt-length sweep sets the prompt lengths itself). */
function usedFields(): readonly FieldKey[] {
  const kind = traffic.kind();
  const used = BASE_FIELDS[kind];
  return kind === 'sweep' && traffic.sweepAxis() === 'promptTokens' ? used.filter((k) => k !== 'promptTokens') : used;
}
traffic.kindField.input.addEventListener('change', () => { applyKind(); showFormError(undefined, ''); });

/** Every value control of the run form, by id. */
function formControls(): (HTMLInputElement | HTMLSelectElement)[] {
  return [...runSection.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input[id], select[id]')].filter((c) => c !== endpointSelect);
}
/** Keeps the form as typed, on each keystroke and pick: a view hidden and shown again (or reloaded) comes back as it was left. */
function rememberForm(): void {
  formValues = Object.fromEntries(formControls().map((c) => [c.id, c.value]));
  remember();
}
// the endpoint picked is kept on its own (pickedEndpoint): only the workload's fields here
runSection.addEventListener('input', (ev) => { if (ev.target !== endpointSelect) rememberForm(); });
runSection.addEventListener('change', (ev) => {
  if (ev.target === endpointSelect) return;
  if ((ev.target as HTMLElement | null)?.id === 'input-sweep-axis') applyKind();
  rememberForm();
});
/** The form as this view left it (getState), over the host's defaults; each restored field tells its own listeners (a sweep's values per axis). */
function restoreForm(values: Readonly<Record<string, string>>): void {
  const byId = new Map(formControls().map((c) => [c.id, c]));
  // the pickers first: a field's listeners read the kind and the axis
  const ids = Object.keys(values).sort((a, b) => Number(byId.get(b) instanceof HTMLSelectElement) - Number(byId.get(a) instanceof HTMLSelectElement));
  for (const id of ids) {
    const c = byId.get(id);
    if (!c) continue;
    if (c instanceof HTMLSelectElement && ![...c.options].some((o) => o.value === values[id])) continue;
    c.value = values[id]!;
    if (c instanceof HTMLInputElement) c.dispatchEvent(new Event('input', { bubbles: false }));
  }
}

/** Ties the form's error to the control it is about (aria-invalid, aria-describedby), or clears it. */
function showFormError(control: HTMLInputElement | HTMLSelectElement | undefined, message: string): void {
  for (const c of [endpointSelect, ...Object.values(fields).map((f) => f.input), ...traffic.controls]) {
    const bad = c === control;
    if (bad) c.setAttribute('aria-invalid', 'true');
    else c.removeAttribute('aria-invalid');
    const described = (c.getAttribute('aria-describedby') ?? '').split(' ').filter((x) => x && x !== 'form-error');
    if (bad) described.push('form-error');
    if (described.length) c.setAttribute('aria-describedby', described.join(' '));
    else c.removeAttribute('aria-describedby');
  }
  formError.textContent = message;
  control?.focus();
}

endpointSelect.addEventListener('change', () => {
  selectedEndpoint = endpointSelect.value;
  pickedEndpoint = selectedEndpoint;
  remember();
  if (endpointSelect.getAttribute('aria-invalid') && selectedEndpoint) showFormError(undefined, '');
});
for (const input of [...Object.values(fields).map((f) => f.input), ...traffic.controls]) {
  input.addEventListener('input', () => { if (input.getAttribute('aria-invalid')) showFormError(undefined, ''); });
}

/** The form's numbers: those the workload picked uses, checked; the others as they are when valid, else the settings'. */
function readWorkload(): SidebarWorkload | { field: FieldKey; message: string } {
  const out: Record<string, number> = {};
  const used = usedFields();
  for (const [k, f] of Object.entries(fields) as [FieldKey, ReturnType<typeof numberField>][]) {
    const n = Number(f.input.value);
    const [min, max] = limits(k);
    const ok = f.input.value.trim() !== '' && Number.isInteger(n) && n >= min && n <= max;
    if (!ok && used.includes(k)) return { field: k, message: `${f.wrap.querySelector('label')!.textContent}: enter a whole number from ${min} to ${max}` };
    out[k] = ok ? n : state.workload[k];
  }
  return out as unknown as SidebarWorkload;
}

runButton.addEventListener('click', () => {
  const w = readWorkload();
  if ('field' in w) { showFormError(fields[w.field].input, w.message); return; }
  const t = traffic.read();
  if ('control' in t) { showFormError(t.control, t.message); return; }
  const endpointId = endpointSelect.value;
  const usable = state.endpoints.some((e) => e.id === endpointId && !e.unavailable);
  if (!endpointId || !usable) {
    showFormError(endpointSelect, state.endpoints.some((e) => e.id !== 'local' || !e.unavailable) ? 'Pick an endpoint first' : 'Add an endpoint first (Endpoints, below): the local server is not bundled on this platform');
    return;
  }
  showFormError(undefined, '');
  post('run', { endpointId, workload: { ...w, ...(t.traffic ? { traffic: t.traffic } : {}), ...(t.dataset !== undefined ? { dataset: t.dataset } : {}), ...(t.sweep ? { sweep: t.sweep } : {}) } });
});
cancelButton.addEventListener('click', () => post('cancelRun', {}));

// ---- the lists (rebuilt from state) ----
const endpointsSection = el('section', 'section');
endpointsSection.setAttribute('aria-labelledby', 'endpoints-title');
const serverSection = el('section', 'section');
serverSection.setAttribute('aria-labelledby', 'server-title');
const runsSection = el('section', 'section');
runsSection.setAttribute('aria-labelledby', 'runs-title');
const problemsSection = el('section', 'section problems');
app.append(runSection, divider(), endpointsSection, divider(), serverSection, divider(), runsSection, problemsSection);
/** The endpoints' list and buttons (rebuilt from state), then the answer of the last Check reachability (kept: a live region must stay in place to be read). */
const endpointsBody = el('div');
const reachStatus = el('div', 'meta reach-status');
reachStatus.id = 'reach-status';
reachStatus.setAttribute('role', 'status');
endpointsSection.append(endpointsBody, reachStatus);
/** Set when Check reachability is pressed: the next state with no check in progress is said in words. */
let reachAsked = false;

let formInitialized = false;
let lastOptions = '';

/** The endpoint the form shows: the user's pick, else the host's request, else the last used, else the first configured; never one that cannot run here. */
function chooseEndpoint(s: SidebarState): string {
  const usable = (id: string | undefined) => id !== undefined && s.endpoints.some((e) => e.id === id && !e.unavailable);
  if (s.select && s.select.seq > selectSeq) {
    selectSeq = s.select.seq;
    if (usable(s.select.id)) pickedEndpoint = s.select.id;
    remember();
  }
  if (usable(pickedEndpoint)) return pickedEndpoint!;
  if (usable(s.lastEndpointId)) return s.lastEndpointId!;
  return s.endpoints.find((e) => e.id !== 'local' && !e.unavailable)?.id ?? s.endpoints.find((e) => !e.unavailable)?.id ?? '';
}

function renderForm(s: SidebarState): void {
  if (!formInitialized) {
    for (const k of Object.keys(FIELDS) as FieldKey[]) fields[k].input.value = String(s.workload[k]);
    traffic.init(s.trafficDefaults, s.workload.traffic, { ...(s.workload.dataset !== undefined ? { dataset: s.workload.dataset } : {}), ...(s.workload.sweep ? { sweep: s.workload.sweep } : {}) });
    if (formValues) restoreForm(formValues);
    applyKind();
    formInitialized = true;
  }
  const keep = chooseEndpoint(s);
  const options = JSON.stringify([keep, s.endpoints.map((e) => [e.id, e.name, e.restricted, Boolean(e.unavailable)])]);
  if (options !== lastOptions) {
    lastOptions = options;
    const opts = s.endpoints.map((e) => option(e.id, e.unavailable ? `${e.name} (not bundled on this platform)` : e.restricted ? `${e.name} (untrusted)` : e.name, Boolean(e.unavailable)));
    if (!keep) opts.unshift(option('', 'No endpoint yet', true));
    endpointSelect.replaceChildren(...opts);
    endpointSelect.value = keep;
    selectedEndpoint = keep;
  }
  const local = s.endpoints.find((e) => e.id === 'local');
  endpointHint.textContent = local?.unavailable && !s.endpoints.some((e) => e.id !== 'local')
    ? 'The local server is not bundled on this platform: add an endpoint below, or use a llama-server binary (Local server, below).'
    : '';
  endpointHint.hidden = !endpointHint.textContent;
  if (endpointHint.textContent) endpointSelect.setAttribute('aria-describedby', [endpointSelect.getAttribute('aria-invalid') ? 'form-error' : '', 'endpoint-hint'].filter(Boolean).join(' '));
  else if (!endpointSelect.getAttribute('aria-invalid')) endpointSelect.removeAttribute('aria-describedby');
  const r = s.running;
  setDisabled(runButton, Boolean(r));
  cancelButton.hidden = !r;
  runStatus.replaceChildren();
  if (r) {
    const total = r.total !== undefined ? `${r.finished}/${r.total}` : `${r.finished} done`;
    runStatus.append(spinner(), el('span', undefined, `${r.label}: ${total}${r.ttftP50Ms !== undefined ? ` · TTFT p50 ${ms(r.ttftP50Ms)}` : ''}`));
  }
}

function reach(e: SidebarEndpoint): HTMLElement {
  const dot = el('span', `dot ${e.reachable ?? 'unknown'}`);
  const label = e.reachable === 'yes' ? 'reachable' : e.reachable === 'no' ? 'unreachable' : e.reachable === 'checking' ? 'checking' : 'not checked';
  dot.setAttribute('role', 'img');
  dot.setAttribute('aria-label', label);
  dot.title = e.reachNote ?? label;
  dot.dataset.reach = e.reachable ?? 'unknown';
  return dot;
}

function renderEndpoints(s: SidebarState): void {
  const title = el('h2', 'title', 'Endpoints');
  title.id = 'endpoints-title';
  const list = el('ul', 'list');
  list.setAttribute('aria-labelledby', 'endpoints-title');
  for (const e of s.endpoints.filter((x) => x.id !== 'local')) {
    const li = el('li', 'item');
    li.dataset.key = e.id;
    const head = el('div', 'row');
    head.append(reach(e), el('span', 'name', e.name));
    if (e.restricted) head.append(badge('untrusted'));
    if (e.hasKey) head.append(badge('key set'));
    const meta = el('div', 'meta', [e.url, e.model].filter(Boolean).join(' · '));
    const note = e.reachable === 'checking' ? 'checking…' : e.reachNote;
    const reachLine = note ? [el('div', `meta reach-note ${e.reachable ?? 'unknown'}`, note)] : [];
    const stats = el('div', 'meta', e.lastTtftP50Ms !== undefined ? `TTFT p50 ${ms(e.lastTtftP50Ms)} · TPOT p50 ${ms(e.lastTpotP50Ms)}` : 'no runs yet');
    li.append(head, meta, ...reachLine, stats);
    const row = el('div', 'actions');
    if (e.editable) {
      const edit = button('Edit', 'secondary', `Edit ${e.name}`);
      edit.dataset.focus = `edit:${e.id}`;
      edit.addEventListener('click', () => post('editEndpoint', { endpointId: e.id }));
      const remove = button('Remove', 'secondary', `Remove ${e.name}`);
      remove.dataset.focus = `remove:${e.id}`;
      remove.addEventListener('click', () => post('removeEndpoint', { endpointId: e.id }));
      row.append(edit, remove);
    }
    if (!e.restricted) {
      // A server on this machine rarely needs a key: offered as a small link there, a button elsewhere.
      const label = e.hasKey ? 'Change key' : e.keyOptional ? 'Add key' : 'Set key';
      const key = button(label, e.keyOptional ? 'link' : 'secondary', `${label}: ${e.name}`);
      key.dataset.focus = `key:${e.id}`;
      key.addEventListener('click', () => post('setApiKey', { endpointId: e.id }));
      if (e.keyOptional) row.append(key);
      else row.prepend(key);
    }
    if (row.childElementCount) li.append(row);
    list.append(li);
  }
  if (!list.childElementCount) list.append(el('li', 'empty', 'No endpoints configured yet.'));
  const add = button('Add endpoint', 'secondary');
  add.dataset.focus = 'add-endpoint';
  add.addEventListener('click', () => post('addEndpoint', {}));
  const check = button('Check reachability', 'secondary');
  check.dataset.focus = 'check-endpoints';
  check.addEventListener('click', () => {
    reachAsked = true;
    reachStatus.textContent = 'Checking…';
    post('checkEndpoints', {});
  });
  const row = el('div', 'actions');
  row.append(add, check);
  endpointsBody.replaceChildren(title, list, row);
  sayReach(s);
}

/** After Check reachability: each endpoint's answer in one line ("vllm-a: reachable (23 ms); vllm-b: not reachable: cannot connect to …"). */
function sayReach(s: SidebarState): void {
  const checked = s.endpoints.filter((e) => e.id !== 'local' && e.reachable !== undefined);
  if (!reachAsked || checked.some((e) => e.reachable === 'checking')) return;
  reachAsked = false;
  reachStatus.textContent = checked.length
    ? checked.map((e) => `${e.name}: ${e.reachNote ?? (e.reachable === 'yes' ? 'reachable' : 'not reachable')}`).join('; ')
    : 'No endpoint to check (an untrusted workspace\'s endpoints are not contacted unasked).';
}

let parallelValue: string | undefined;
function renderServer(s: SidebarState): void {
  const ls = s.localServer;
  const title = el('h2', 'title', 'Local server');
  title.id = 'server-title';
  const status = el('div', 'row');
  status.id = 'local-server-state';
  status.setAttribute('role', 'status');
  status.append(el('span', `dot ${ls.state === 'running' ? 'yes' : ls.state === 'error' ? 'no' : 'unknown'}`), el('span', 'name', ls.state));
  if (ls.state === 'starting' || ls.state === 'stopping') status.append(spinner());
  const meta = el('div', 'meta', ls.state === 'running' ? `${ls.model ?? ''} · port ${ls.port ?? ''}` : `model: ${ls.source}`);
  const [minSlots, maxSlots] = [optionSpec('parallel').min ?? 1, optionSpec('parallel').max ?? 256];
  const parallel = numberField('parallel', 'Parallel slots', Number(parallelValue ?? ls.parallel), minSlots, maxSlots);
  parallel.input.addEventListener('input', () => { parallelValue = parallel.input.value; });
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
      const p = Number(parallel.input.value);
      post('startLocalServer', { parallel: Number.isInteger(p) && p >= minSlots && p <= maxSlots ? p : ls.parallel });
    });
    row.append(parallel.wrap, start);
  }
  // starts its own servers (one per chunk size), so it does not need this one running
  const dial = button('Compare prefill chunks', 'secondary');
  dial.title = 'The same mixed workload at two prefill chunk sizes, side by side (LLM Profiler: Compare prefill chunk sizes)';
  dial.dataset.focus = 'prefill-dial';
  setDisabled(dial, Boolean(s.running));
  dial.addEventListener('click', () => post('comparePrefillChunks', {}));
  row.append(dial);
  const missing: HTMLElement[] = [];
  if (ls.unavailable) {
    const note = el('div', 'note', 'Not bundled on this platform: the local server needs a llama-server binary (llama.cpp\'s server, from its releases or a package manager).');
    note.id = 'local-server-note';
    const use = button('Use a llama-server binary…', 'primary');
    use.dataset.focus = 'use-llama-server';
    use.addEventListener('click', () => post('useLlamaServer', {}));
    const useRow = el('div', 'actions');
    useRow.append(use);
    missing.push(note, useRow);
  }
  const message = ls.message && ls.message !== ls.unavailable ? [el('div', 'error', ls.message)] : [];
  serverSection.replaceChildren(title, status, meta, ...missing, ...message, row);
}

/**
 * A run slower than its baseline: a mark with its name for assistive tech ("Regressed against its
 * baseline: TPOT p50 4.1% slower than baseline …"), the same lines as its tooltip.
 */
function regressedMark(lines: readonly string[]): HTMLElement {
  const mark = el('span', 'badge regressed', '▲ regressed');
  mark.setAttribute('role', 'img');
  mark.setAttribute('aria-label', `Regressed against its baseline: ${lines.join('; ')}`);
  mark.title = lines.join('\n');
  return mark;
}

/** A run pinned as a baseline: of what. */
function baselineBadge(scopes: readonly ('endpoint' | 'promptFile')[]): HTMLElement {
  const b = badge('baseline');
  b.classList.add('baseline');
  b.title = `The baseline of its ${scopes.map((x) => (x === 'endpoint' ? 'endpoint' : 'prompt file')).join(' and its ')}: later runs there are compared with it`;
  return b;
}

function runRow(r: SidebarRun): HTMLElement {
  const li = el('li', 'item');
  li.dataset.key = r.id;
  const head = el('div', 'row');
  head.append(el('span', 'name', r.name || r.endpointName));
  if (r.regressed?.length) head.append(regressedMark(r.regressed));
  if (r.baselineOf?.length) head.append(baselineBadge(r.baselineOf));
  if (r.cancelled) head.append(badge('cancelled'));
  if (r.interrupted) head.append(badge('interrupted'));
  if (r.failed) head.append(badge(`${r.failed} failed`));
  // the start time is in the name, in the one form every surface says it (src/present/timeText.ts); said here only for a name without it
  const when = r.name ? [] : [clockTime(r.startedAt, clock)];
  const meta = el('div', 'meta', [...when, ...(r.network ?? []), `TTFT p50 ${ms(r.ttftP50Ms)}`, `TPOT p50 ${ms(r.tpotP50Ms)}`, ...(r.prompt ? [r.prompt] : []), ...(r.sent ? [r.sent] : [])].join(' · '));
  const open = button('Open', 'secondary', `Open the run ${r.name || r.endpointName}`);
  open.dataset.focus = `open:${r.id}`;
  open.addEventListener('click', () => post('openRun', { runId: r.id }));
  const compare = button(compareFirst === r.id ? 'Compare with…' : 'Compare', compareFirst === r.id ? 'primary' : 'secondary');
  compare.title = 'Compare two runs: pick this one, then another';
  compare.dataset.focus = `compare:${r.id}`;
  compare.setAttribute('aria-pressed', String(compareFirst === r.id));
  compare.addEventListener('click', () => {
    if (!compareFirst) { compareFirst = r.id; render(); return; }
    if (compareFirst === r.id) { compareFirst = undefined; render(); return; }
    post('compareRuns', { runId: compareFirst, otherId: r.id });
    compareFirst = undefined;
    render();
  });
  const pinned = Boolean(r.baselineOf?.length);
  // short, so a run's four buttons fit a narrow sidebar on one line; the name says the rest
  const pin = button(pinned ? 'Unpin' : 'Pin', 'secondary', `${pinned ? 'Unpin baseline' : 'Pin as baseline'}: ${r.name || r.endpointName}`);
  pin.title = pinned ? 'Later runs are no longer compared with this one' : 'Compare later runs of its endpoint or prompt file with this one (the CodeLens, and a mark here when one is slower)';
  pin.dataset.focus = `pin:${r.id}`;
  pin.addEventListener('click', () => post(pinned ? 'unpinBaseline' : 'pinBaseline', { runId: r.id }));
  const del = button('Delete', 'secondary', `Delete the run ${r.name || r.endpointName}`);
  del.dataset.focus = `delete:${r.id}`;
  del.addEventListener('click', () => post('deleteRun', { runId: r.id }));
  const row = el('div', 'actions');
  row.append(open, compare, pin, del);
  li.append(head, meta, row);
  return li;
}

function renderRuns(s: SidebarState): void {
  const title = el('h2', 'title', 'Recent runs');
  title.id = 'runs-title';
  const list = el('ul', 'list');
  list.id = 'runs-list';
  list.setAttribute('aria-label', 'Recent runs');
  for (const r of s.runs) list.append(runRow(r));
  if (!s.runs.length) {
    const empty = el('li', 'empty', 'No runs yet. ');
    // the first-run walkthrough: the local server, a run, a prompt file, an endpoint of one's own
    const start = button('Get started', 'link', 'Get started: a walkthrough of the first steps');
    start.dataset.focus = 'get-started';
    start.addEventListener('click', () => post('openWalkthrough', {}));
    empty.append(start);
    list.append(empty);
  }
  const hint = compareFirst ? [el('div', 'meta', 'Pick a second run to compare with.')] : [];
  runsSection.replaceChildren(title, ...hint, list);
}

function renderProblems(s: SidebarState): void {
  if (!s.problems.length) { problemsSection.replaceChildren(); return; }
  const title = el('h2', 'title', 'Problems');
  title.id = 'problems-title';
  problemsSection.setAttribute('aria-labelledby', 'problems-title');
  const list = el('ul', 'list');
  for (const p of s.problems) list.append(el('li', 'error', p));
  problemsSection.replaceChildren(title, list);
}

function render(): void {
  // only while this view has the focus: a redraw never pulls it back from the editor or a quick input
  const focusKey = document.hasFocus() ? (document.activeElement as HTMLElement | null)?.dataset?.focus : undefined;
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
    case 'pickedFile':
      traffic.setFile(m.purpose, m.path);
      break;
  }
});

render();
post('ready', {});
