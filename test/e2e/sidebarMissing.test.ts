// The sidebar's run form and endpoints in Chromium, as VS Code serves the view (test/support/
// sidebarHarness.ts), for issue 32's "what is missing where a user looks for it": the form comes back
// as it was typed when the view is shown again (getState); "Prompts from a dataset" with a file
// picker, and "Sweep" with its axis and values, post what the host turns into the CLI's --dataset and
// sweep; Check reachability answers in words; an empty run list offers the walkthrough. Needs
// `npm run build` (dist/webview/sidebar.js). Screenshots go to test-artifacts/.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { SidebarEndpoint, SidebarState } from '../../src/shared/protocol';
import { reachText } from '../../src/present/endpointText';
import { SWEEP_PROMPT_LENGTHS, SWEEP_RATES, TRAFFIC_DEFAULTS, sweepConcurrencies } from '../../src/jobs/presets';
import { axeViolations, describeViolations } from '../support/axe';
import { sendToPage, type ThemeName } from '../support/reportHarness';
import { cspViolations, openSidebar, posted, savedState, sidebarSession } from '../support/sidebarHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = sidebarSession();
before(() => mkdirSync(artifacts, { recursive: true }));

const ENDPOINTS: SidebarEndpoint[] = [
  { id: 'cfg:vllm-a', name: 'vllm-a', url: 'http://127.0.0.1:8000', api: 'openai-chat', restricted: false, hasKey: false, editable: true, keyOptional: true },
  { id: 'cfg:vllm-b', name: 'vllm-b', url: 'http://127.0.0.1:1', api: 'openai-chat', restricted: false, hasKey: false, editable: true, keyOptional: true },
  { id: 'local', name: 'Local server', url: '(not running)', api: 'openai-chat', restricted: false, hasKey: false },
];

function state(over: Partial<SidebarState> = {}): SidebarState {
  return {
    endpoints: ENDPOINTS,
    localServer: { state: 'stopped', source: 'preset:tiny', parallel: 4 },
    runs: [{ id: 'r1', name: 'c=2 · 6 req on vllm-a, 10:14', endpointName: 'vllm-a', startedAt: '2026-12-04T10:14:00Z', completed: 6, failed: 0, cancelled: false, ttftP50Ms: 120, tpotP50Ms: 12 }],
    workload: { concurrency: 4, requests: 20, maxTokens: 128, promptTokens: 64 },
    trafficDefaults: { ...TRAFFIC_DEFAULTS, sweep: { concurrency: sweepConcurrencies(8), rate: SWEEP_RATES, promptTokens: SWEEP_PROMPT_LENGTHS } },
    problems: [],
    ...over,
  };
}

async function open(s: SidebarState, saved?: unknown, theme: ThemeName = 'dark'): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const o = await openSidebar(session.browser, session.server.page(s), { theme, saved, width: 320 });
  return { page: o.page, problems: o.problems, close: () => o.context.close() };
}

const value = (page: Page, id: string) => page.locator(`#${id}`).inputValue();
const runs = async (page: Page) => (await posted(page)).filter((m) => m.type === 'run');

test('the form keeps what was typed: a view shown again (a new page, its getState) comes back with 3 / 12 / 64, not the defaults', async () => {
  const first = await open(state());
  let saved: unknown;
  try {
    await first.page.fill('#input-concurrency', '3');
    await first.page.fill('#input-requests', '12');
    await first.page.fill('#input-maxTokens', '64');
    await first.page.selectOption('#input-workload-kind', 'sweep');
    await first.page.selectOption('#input-sweep-axis', 'rate');
    await first.page.fill('#input-sweep-values', '0.5, 1, 3');
    saved = await savedState(first.page);
    assert.ok(saved && typeof saved === 'object' && 'form' in saved, `the page keeps its form in setState: ${JSON.stringify(saved)}`);
  } finally {
    await first.close();
  }
  // VS Code discards a hidden view's page: the next one starts from the host's state and getState()
  const again = await open(state(), saved);
  try {
    assert.deepEqual(await Promise.all(['input-concurrency', 'input-requests', 'input-maxTokens'].map((id) => value(again.page, id))), ['3', '12', '64']);
    assert.equal(await value(again.page, 'input-workload-kind'), 'sweep');
    assert.equal(await value(again.page, 'input-sweep-axis'), 'rate');
    assert.equal(await value(again.page, 'input-sweep-values'), '0.5, 1, 3');
    // the concurrency axis's values were not overwritten by the rate's
    await again.page.selectOption('#input-sweep-axis', 'concurrency');
    assert.equal(await value(again.page, 'input-sweep-values'), '1, 2, 4, 8');
    await again.page.selectOption('#input-sweep-axis', 'rate');
    assert.equal(await value(again.page, 'input-sweep-values'), '0.5, 1, 3');
    await again.page.screenshot({ path: join(artifacts, 'sidebar-form-restored.png'), fullPage: true });
    assert.deepEqual(again.problems, []);
  } finally {
    await again.close();
  }
});

test('"Prompts from a dataset": a file picker (Browse… asks the host), then Run posts the dataset with the load; a missing file is said at its field', async () => {
  const { page, problems, close } = await open(state());
  try {
    await page.selectOption('#input-workload-kind', 'prompts');
    assert.equal(await page.isVisible('#field-prompts-file'), true);
    for (const f of ['promptTokens', 'maxTokens']) assert.equal(await page.isVisible(`#field-${f}`), false, `${f}: a dataset's prompts have their own lengths`);
    for (const f of ['concurrency', 'requests']) assert.equal(await page.isVisible(`#field-${f}`), true, f);
    await page.click('#run-button');
    assert.equal(await page.textContent('#form-error'), 'Dataset: choose a file (Browse…) or type its path');
    assert.equal(await page.getAttribute('#input-prompts-file', 'aria-invalid'), 'true');
    await page.getByRole('button', { name: 'Browse… for the dataset' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'pickFile'), [{ type: 'pickFile', purpose: 'prompts' }]);
    await sendToPage(page, { type: 'pickedFile', purpose: 'prompts', path: '/w/data/sharegpt.jsonl' });
    await page.fill('#input-requests', '30');
    await page.click('#run-button');
    const [run] = await runs(page);
    assert.deepEqual(run!.workload, { concurrency: 4, requests: 30, maxTokens: 128, promptTokens: 64, dataset: '/w/data/sharegpt.jsonl' });
    await page.screenshot({ path: join(artifacts, 'sidebar-dataset-prompts.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});

test('"Sweep": an axis and its values (checked as the CLI\'s), requests per point; Run posts the sweep', async () => {
  const { page, problems, close } = await open(state());
  try {
    await page.selectOption('#input-workload-kind', 'sweep');
    assert.equal(await value(page, 'input-sweep-axis'), 'concurrency');
    assert.equal(await value(page, 'input-sweep-values'), '1, 2, 4, 8', 'the values Profile endpoint\'s Sweep offers');
    assert.equal(await page.textContent('#field-requests label'), 'Requests per point');
    assert.equal(await page.isVisible('#field-concurrency'), false, 'what a concurrency sweep varies');
    await page.selectOption('#input-sweep-axis', 'promptTokens');
    assert.equal(await value(page, 'input-sweep-values'), '128, 512, 2048');
    assert.equal(await page.isVisible('#field-promptTokens'), false, 'a prompt-length sweep sets the lengths');
    await page.selectOption('#input-sweep-axis', 'concurrency');
    await page.fill('#input-sweep-values', '1, 2.5');
    await page.click('#run-button');
    assert.match(await page.textContent('#form-error') ?? '', /^Values: 2\.5: Enter a whole number/);
    assert.equal(await page.getAttribute('#input-sweep-values', 'aria-invalid'), 'true');
    assert.equal((await runs(page)).length, 0);
    await page.fill('#input-sweep-values', '1, 2, 4');
    await page.fill('#input-requests', '6');
    await page.click('#run-button');
    const [run] = await runs(page);
    assert.deepEqual(run!.workload, { concurrency: 4, requests: 6, maxTokens: 128, promptTokens: 64, sweep: { axis: 'concurrency', values: [1, 2, 4] } });
    await page.screenshot({ path: join(artifacts, 'sidebar-sweep-form.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});

test('Check reachability answers in words, per endpoint and in a status line: the time, or why not', async () => {
  const { page, problems, close } = await open(state());
  try {
    await page.click('[data-focus="check-endpoints"]');
    assert.equal((await posted(page)).filter((m) => m.type === 'checkEndpoints').length, 1);
    assert.equal(await page.textContent('#reach-status'), 'Checking…');
    const checking = ENDPOINTS.map((e) => (e.id === 'local' ? e : { ...e, reachable: 'checking' as const }));
    await sendToPage(page, { type: 'state', state: state({ endpoints: checking }) });
    assert.equal(await page.textContent('#reach-status'), 'Checking…', 'still going');
    // the notes as the host words them (reachText), the refusal in a run's own sentence
    const refused = reachText({ reachable: false, code: 'ECONNREFUSED', message: 'cannot connect to http://127.0.0.1:1 (connection refused, nothing listens on that port; ECONNREFUSED)' });
    const answered: SidebarEndpoint[] = [
      { ...ENDPOINTS[0]!, reachable: 'yes', reachNote: 'reachable (23 ms)' },
      { ...ENDPOINTS[1]!, reachable: 'no', reachNote: refused },
      ENDPOINTS[2]!,
    ];
    await sendToPage(page, { type: 'state', state: state({ endpoints: answered }) });
    assert.equal(await page.getAttribute('#reach-status', 'role'), 'status');
    assert.equal(await page.textContent('#reach-status'), `vllm-a: reachable (23 ms); vllm-b: ${refused}`);
    assert.equal(await page.textContent('li.item[data-key="cfg:vllm-b"] .reach-note'), refused);
    assert.equal(await page.getAttribute('li.item[data-key="cfg:vllm-a"] .dot', 'title'), 'reachable (23 ms)');
    await page.screenshot({ path: join(artifacts, 'sidebar-reachability.png'), fullPage: true });
    const vs = await axeViolations(page);
    assert.equal(vs.length, 0, describeViolations(vs));
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});

test('an empty run list offers the walkthrough: "Get started" posts openWalkthrough', async () => {
  const { page, problems, close } = await open(state({ runs: [] }), undefined, 'light');
  try {
    const start = page.getByRole('button', { name: 'Get started: a walkthrough of the first steps' });
    assert.equal(await start.count(), 1);
    await start.click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'openWalkthrough'), [{ type: 'openWalkthrough' }]);
    const vs = await axeViolations(page);
    assert.equal(vs.length, 0, describeViolations(vs));
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});
