// The sidebar webview in Chromium, as VS Code serves it (test/support/sidebarHarness.ts): axe-core in
// the light, dark and high-contrast themes with a state holding endpoints, a running job, runs and
// problems; the page's own CSP never tripped; the keyboard (the endpoint picker, the Run button, a
// form error tied to its field); the compare toggle's pressed state on a real button; the local server
// never the default where it is not bundled; the form following Add endpoint and the last run. Needs
// `npm run build` (dist/webview/sidebar.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { SidebarEndpoint, SidebarState } from '../../src/shared/protocol';
import { TRAFFIC_DEFAULTS } from '../../src/jobs/presets';
import { axeViolations, describeViolations } from '../support/axe';
import { sendToPage, THEMES, type ThemeName } from '../support/reportHarness';
import { cspViolations, openSidebar, posted, savedState, sidebarSession } from '../support/sidebarHarness';

const session = sidebarSession();

const LOCAL_MISSING: SidebarEndpoint = {
  id: 'local', name: 'Local server', url: '(not running)', api: 'openai-chat', restricted: false, hasKey: false,
  unavailable: 'the local server is not bundled on this platform',
};

/** What the host says regressed (src/extension/baselineText.ts regressionLines). */
const REGRESSED = ['TPOT p50 4.1% slower than baseline c=2 · 6 req on vllm, 10:14', 'Output tokens/s 3.2% slower than baseline c=2 · 6 req on vllm, 10:14'];

function fullState(over: Partial<SidebarState> = {}): SidebarState {
  return {
    endpoints: [
      { id: 'cfg:vllm', name: 'vllm', url: 'https://gpu.example:8000', api: 'openai-chat', model: 'llama-3-8b', restricted: false, hasKey: true, reachable: 'yes', lastTtftP50Ms: 120, lastTpotP50Ms: 12, editable: true },
      { id: 'cfg:llama', name: 'llama', url: 'http://127.0.0.1:8080', api: 'auto', restricted: false, hasKey: false, reachable: 'no', editable: true, keyOptional: true },
      { id: 'cfg:team', name: 'team', url: 'http://10.0.0.2:8000', api: 'auto', restricted: true, hasKey: false },
      LOCAL_MISSING,
    ],
    localServer: { state: 'error', source: 'preset:tiny', parallel: 4, message: 'exited with code 1', unavailable: 'the local server is not bundled on this platform' },
    runs: [
      { id: 'r1', name: 'c=2 · 6 req on vllm, 10:14', endpointName: 'vllm', startedAt: '2026-12-04T10:14:00Z', completed: 6, failed: 0, cancelled: false, ttftP50Ms: 120, tpotP50Ms: 12, baselineOf: ['endpoint'] },
      { id: 'r2', name: 'c=8 · 64 req on vllm, 10:20', endpointName: 'vllm', startedAt: '2026-12-04T10:20:00Z', completed: 60, failed: 4, cancelled: true, ttftP50Ms: 150, tpotP50Ms: 14, network: ['via proxy http://p:3128'],
        regressed: REGRESSED },
    ],
    workload: { concurrency: 4, requests: 20, maxTokens: 128, promptTokens: 64 },
    trafficDefaults: TRAFFIC_DEFAULTS,
    running: { runId: 'r3', label: 'vllm', finished: 3, total: 20, ttftP50Ms: 130 },
    problems: ['llmProfiler.workload.concurrency: must be between 1 and 4096 (got 0); using 1'],
    ...over,
  };
}

async function open(state: SidebarState, theme: ThemeName = 'dark', saved?: unknown): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const o = await openSidebar(session.browser, session.server.page(state), { theme, saved });
  return { page: o.page, problems: o.problems, close: () => o.context.close() };
}

test('axe: the sidebar has no serious or critical violation in any theme, and never trips its CSP', { timeout: 120_000 }, async () => {
  const found: string[] = [];
  for (const theme of Object.keys(THEMES) as ThemeName[]) {
    const { page, problems, close } = await open(fullState(), theme);
    try {
      // the states a user passes through: the first run picked for a compare, a new state pushed
      await page.locator('[data-focus="compare:r1"]').click();
      await sendToPage(page, { type: 'state', state: fullState({ running: undefined }) });
      const vs = await axeViolations(page);
      if (vs.length) found.push(`${theme}:\n  ${describeViolations(vs)}`);
      const csp = await cspViolations(page);
      if (csp.length) found.push(`${theme}: CSP violations: ${csp.join('; ')}`);
      if (problems.length) found.push(`${theme}: ${problems.join('; ')}`);
    } finally {
      await close();
    }
  }
  assert.equal(found.length, 0, found.join('\n'));
});

test('the compare toggle is a real button whose pressed state assistive tech sees', async () => {
  const { page, close } = await open(fullState({ running: undefined }));
  try {
    assert.equal(await page.getByRole('button', { name: 'Compare', exact: true, pressed: false }).count(), 2);
    await page.locator('[data-focus="compare:r1"]').click();
    assert.equal(await page.getByRole('button', { name: 'Compare with…', pressed: true }).count(), 1);
    // the pick survives a state update, and a second click on another run posts the compare
    await sendToPage(page, { type: 'state', state: fullState({ running: undefined }) });
    assert.equal(await page.getByRole('button', { pressed: true }).count(), 1);
    await page.locator('[data-focus="compare:r2"]').click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'compareRuns'), [{ type: 'compareRuns', runId: 'r1', otherId: 'r2' }]);
    assert.equal(await page.getByRole('button', { pressed: true }).count(), 0);
  } finally {
    await close();
  }
});

test('keyboard: the endpoint picker is a labelled native select; arrows pick, only Run runs, Tab reaches Run', async () => {
  const { page, close } = await open(fullState({ running: undefined }));
  try {
    const select = page.getByRole('combobox', { name: 'Endpoint' });
    assert.equal(await select.count(), 1);
    assert.equal(await select.inputValue(), 'cfg:vllm');
    await select.focus();
    await page.keyboard.press('ArrowDown');
    assert.equal(await select.inputValue(), 'cfg:llama', 'ArrowDown picks the next endpoint');
    assert.equal((await posted(page)).filter((m) => m.type === 'run').length, 0, 'picking runs nothing');
    // the untrusted one can be picked (it asks before sending); the local server here cannot
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(await select.inputValue(), 'cfg:team', 'the unavailable local server is skipped');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    let reached = false;
    for (let i = 0; i < 8 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.id === 'run-button');
    }
    assert.ok(reached, 'Tab from the endpoint picker reaches Run through the four fields');
    await page.keyboard.press('Enter');
    const runs = (await posted(page)).filter((m) => m.type === 'run');
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.endpointId, 'cfg:vllm');
    assert.deepEqual(runs[0]!.workload, { concurrency: 4, requests: 20, maxTokens: 128, promptTokens: 64 });
  } finally {
    await close();
  }
});

test('a form error is tied to its field (aria-invalid, aria-describedby), takes focus, and clears when fixed', async () => {
  const { page, close } = await open(fullState({ running: undefined }));
  try {
    const requests = page.getByRole('spinbutton', { name: 'Requests' });
    await requests.fill('0');
    await page.locator('#run-button').click();
    assert.equal(await requests.getAttribute('aria-invalid'), 'true');
    assert.match((await requests.getAttribute('aria-describedby')) ?? '', /\bform-error\b/);
    assert.match(await page.locator('#form-error').innerText(), /^Requests: enter a whole number from 1 to \d+/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input-requests');
    assert.equal((await posted(page)).filter((m) => m.type === 'run').length, 0);
    // the accessible description is the error
    const description = await requests.evaluate((el) => (el.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' '));
    assert.match(description, /Requests: enter a whole number/);
    await requests.fill('3');
    assert.equal(await requests.getAttribute('aria-invalid'), null);
    assert.equal(await requests.getAttribute('aria-describedby'), null);
    assert.equal(await page.locator('#form-error').innerText(), '');
    await page.locator('#run-button').click();
    assert.equal((await posted(page)).filter((m) => m.type === 'run').length, 1);
  } finally {
    await close();
  }
});

test('where the local server is not bundled it is never the default: the form says what to do, and Run says to add an endpoint', async () => {
  const { page, close } = await open(fullState({ endpoints: [LOCAL_MISSING], running: undefined, runs: [] }));
  try {
    const select = page.getByRole('combobox', { name: 'Endpoint' });
    assert.equal(await select.inputValue(), '');
    assert.equal(await page.locator('#endpoint-select option[value="local"]').evaluate((o: HTMLOptionElement) => o.disabled), true);
    assert.match(await page.locator('#endpoint-select option[value="local"]').innerText(), /not bundled on this platform/);
    assert.match(await page.locator('#endpoint-hint').innerText(), /add an endpoint.*llama-server binary/);
    assert.match((await select.getAttribute('aria-describedby')) ?? '', /endpoint-hint/);
    await page.locator('#run-button').click();
    assert.equal(await select.getAttribute('aria-invalid'), 'true');
    assert.match(await page.locator('#form-error').innerText(), /Add an endpoint first/);
    assert.equal((await posted(page)).filter((m) => m.type === 'run').length, 0);
    // the way forward from the UI
    await page.locator('[data-focus="use-llama-server"]').click();
    assert.equal((await posted(page)).filter((m) => m.type === 'useLlamaServer').length, 1);
  } finally {
    await close();
  }
});

test('the form starts from the last endpoint used, and switches to a newly added one (and its dot shows the check)', async () => {
  const { page, close } = await open(fullState({ running: undefined, lastEndpointId: 'cfg:llama' }));
  try {
    const select = page.getByRole('combobox', { name: 'Endpoint' });
    assert.equal(await select.inputValue(), 'cfg:llama');
    const added = fullState({ running: undefined, lastEndpointId: 'cfg:llama', select: { id: 'cfg:new', seq: 1 } });
    const endpoints = [...added.endpoints.slice(0, 3), { id: 'cfg:new', name: 'new', url: 'http://127.0.0.1:9000', api: 'openai-chat', restricted: false, hasKey: false, reachable: 'checking' as const, editable: true, keyOptional: true }, LOCAL_MISSING];
    await sendToPage(page, { type: 'state', state: { ...added, endpoints } });
    await page.waitForFunction(() => (document.getElementById('endpoint-select') as HTMLSelectElement).value === 'cfg:new');
    const item = page.locator('li.item[data-key="cfg:new"]');
    assert.equal(await item.locator('.dot').getAttribute('aria-label'), 'checking');
    await sendToPage(page, { type: 'state', state: { ...added, endpoints: endpoints.map((e) => (e.id === 'cfg:new' ? { ...e, reachable: 'yes' as const } : e)) } });
    await page.waitForFunction(() => document.querySelector('li.item[data-key="cfg:new"] .dot')?.getAttribute('aria-label') === 'reachable');
    // the same request again (seq unchanged) does not undo a later pick
    await select.selectOption('cfg:vllm');
    await sendToPage(page, { type: 'state', state: { ...added, endpoints } });
    assert.equal(await select.inputValue(), 'cfg:vllm');
  } finally {
    await close();
  }
});

test('endpoint actions: a key is a small link on a server on this machine and a button elsewhere; Edit and Remove only for user settings', async () => {
  const { page, close } = await open(fullState({ running: undefined }));
  try {
    const local = page.locator('li.item[data-key="cfg:llama"]');
    const addKey = local.getByRole('button', { name: 'Add key: llama' });
    assert.equal(await addKey.getAttribute('class'), 'btn link');
    const remote = page.locator('li.item[data-key="cfg:vllm"]');
    assert.equal(await remote.getByRole('button', { name: 'Change key: vllm' }).getAttribute('class'), 'btn secondary');
    const team = page.locator('li.item[data-key="cfg:team"]');
    assert.equal(await team.getByRole('button').count(), 0, 'an untrusted workspace\'s endpoint: no key, no edit');
    await remote.getByRole('button', { name: 'Edit vllm' }).click();
    await local.getByRole('button', { name: 'Remove llama' }).click();
    await addKey.click();
    const ms = (await posted(page)).filter((m) => m.type !== 'ready');
    assert.deepEqual(ms, [
      { type: 'editEndpoint', endpointId: 'cfg:vllm' },
      { type: 'removeEndpoint', endpointId: 'cfg:llama' },
      { type: 'setApiKey', endpointId: 'cfg:llama' },
    ]);
  } finally {
    await close();
  }
});

test('a view restored after being hidden keeps the user\'s pick: the host\'s old "switch to the new endpoint" is not applied again', async () => {
  const withNew = fullState({ running: undefined, select: { id: 'cfg:llama', seq: 3 } });
  const first = await open(withNew);
  let saved: unknown;
  try {
    const select = first.page.getByRole('combobox', { name: 'Endpoint' });
    assert.equal(await select.inputValue(), 'cfg:llama', 'switched to the new endpoint');
    await select.selectOption('cfg:vllm');
    saved = await savedState(first.page);
    assert.deepEqual(saved, { endpoint: 'cfg:vllm', selectSeq: 3 });
  } finally {
    await first.close();
  }
  const again = await open(withNew, 'dark', saved);
  try {
    assert.equal(await again.page.getByRole('combobox', { name: 'Endpoint' }).inputValue(), 'cfg:vllm');
  } finally {
    await again.close();
  }
});

test('a run that regressed against its baseline is marked, named for assistive tech and explained in its tooltip; a baseline is marked; pin and unpin post to the host', async () => {
  const { page, problems, close } = await open(fullState(), 'light');
  try {
    const mark = page.locator('li[data-key="r2"] .badge.regressed');
    assert.equal(await mark.count(), 1);
    assert.equal(await mark.textContent(), '▲ regressed');
    // its accessible name says what regressed, as the tooltip does
    assert.equal(await page.getByRole('img', { name: `Regressed against its baseline: ${REGRESSED.join('; ')}` }).count(), 1);
    assert.equal(await mark.getAttribute('title'), REGRESSED.join('\n'));
    assert.equal(await page.locator('li[data-key="r1"] .badge.regressed').count(), 0, 'the baseline itself is not marked');
    assert.equal(await page.locator('li[data-key="r1"] .badge.baseline').textContent(), 'baseline');
    assert.match(await page.locator('li[data-key="r1"] .badge.baseline').getAttribute('title') ?? '', /^The baseline of its endpoint/);
    // the buttons say what they do, per run
    await page.getByRole('button', { name: 'Unpin baseline: c=2 · 6 req on vllm, 10:14' }).click();
    await page.getByRole('button', { name: 'Pin as baseline: c=8 · 64 req on vllm, 10:20' }).click();
    assert.deepEqual((await posted(page)).filter((m) => /Baseline$/.test(m.type)), [{ type: 'unpinBaseline', runId: 'r1' }, { type: 'pinBaseline', runId: 'r2' }]);
    // a state where nothing regressed: no mark left behind
    await sendToPage(page, { type: 'state', state: fullState({ runs: fullState().runs.map((r) => ({ ...r, regressed: undefined })) }) });
    await page.waitForFunction(() => !document.querySelector('.badge.regressed'));
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});

/** The labels of the form's fields shown now, in order. */
function shownFields(page: Page): Promise<string[]> {
  return page.$$eval('#run-title ~ .grid .field:not([hidden]) label', (ls) => ls.map((l) => l.textContent ?? ''));
}

async function pickWorkload(page: Page, label: string): Promise<void> {
  await page.getByRole('combobox', { name: 'Workload' }).selectOption({ label });
}

async function runsPosted(page: Page): Promise<{ type: string; [k: string]: unknown }[]> {
  return (await posted(page)).filter((m) => m.type === 'run');
}

test('the Workload picker: each kind shows its own fields, checked as the CLI checks its flags, and Run posts the traffic as the CLI\'s flags give it', async () => {
  const { page, problems, close } = await open(fullState({ running: undefined }));
  try {
    const kind = page.getByRole('combobox', { name: 'Workload' });
    assert.equal(await kind.inputValue(), 'single');
    assert.deepEqual(await shownFields(page), ['Concurrency', 'Requests', 'Max tokens', 'Prompt tokens']);

    // conversations: sessions in flight, sessions, turns and lengths, think time; from the CLI's defaults
    await pickWorkload(page, 'Conversations');
    assert.deepEqual(await shownFields(page), ['Sessions', 'Turns', 'User tokens', 'Reply tokens', 'Think time (ms)', 'Sessions in flight']);
    const c = TRAFFIC_DEFAULTS.chat;
    assert.deepEqual(await Promise.all(['Sessions', 'Turns', 'User tokens', 'Reply tokens', 'Think time (ms)'].map((n) => page.getByRole('spinbutton', { name: n, exact: true }).inputValue())),
      [c.sessions, c.turns, c.userTokens, c.replyTokens, c.thinkTimeMs].map(String));
    const turns = page.getByRole('spinbutton', { name: 'Turns', exact: true });
    await turns.fill('0');
    await page.locator('#run-button').click();
    assert.equal(await turns.getAttribute('aria-invalid'), 'true');
    assert.match(await page.locator('#form-error').innerText(), /^Turns: must be a whole number ≥ 1/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input-turns');
    assert.equal((await runsPosted(page)).length, 0);
    await turns.fill('3');
    assert.equal(await turns.getAttribute('aria-invalid'), null, 'fixed: the error clears');
    await page.getByRole('spinbutton', { name: 'Think time (ms)' }).fill('250');
    await page.getByRole('spinbutton', { name: 'Sessions in flight' }).fill('2');
    await page.locator('#run-button').click();
    assert.deepEqual((await runsPosted(page)).at(-1)!.workload, { concurrency: 2, requests: 20, maxTokens: 128, promptTokens: 64,
      traffic: { kind: 'chat', sessions: c.sessions, turns: 3, userTokens: c.userTokens, replyTokens: c.replyTokens, thinkTimeMs: 250 } });

    // conversations from a file: the file first (Browse asks the host; its answer fills the field), sessions may be blank (all)
    await pickWorkload(page, 'Conversations from a file');
    assert.deepEqual(await shownFields(page), ['Conversations file (JSON Lines)', 'Sessions (blank: all)', 'Think time (ms)', 'Sessions in flight']);
    await page.locator('#run-button').click();
    const file = page.getByRole('textbox', { name: 'Conversations file (JSON Lines)' });
    assert.equal(await file.getAttribute('aria-invalid'), 'true');
    assert.match(await page.locator('#form-error').innerText(), /^Conversations file: choose a file \(Browse…\) or type its path/);
    await page.getByRole('button', { name: 'Browse… for the conversations file' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'pickFile'), [{ type: 'pickFile', purpose: 'dataset' }]);
    await sendToPage(page, { type: 'pickedFile', purpose: 'dataset', path: '/w/data/sharegpt.jsonl' });
    assert.equal(await file.inputValue(), '/w/data/sharegpt.jsonl');
    assert.equal(await file.getAttribute('aria-invalid'), null, 'the file chosen clears the error');
    await page.locator('#run-button').click();
    assert.deepEqual((await runsPosted(page)).at(-1)!.workload, { concurrency: 2, requests: 20, maxTokens: 128, promptTokens: 64,
      traffic: { kind: 'dataset', path: '/w/data/sharegpt.jsonl', thinkTimeMs: 250 } });

    // a trace: its file and speed only (the trace gives the load and the lengths)
    await pickWorkload(page, 'Trace replay');
    assert.deepEqual(await shownFields(page), ['Trace (Mooncake JSONL or Azure CSV)', 'Speed (×)']);
    await page.getByRole('textbox', { name: 'Trace (Mooncake JSONL or Azure CSV)' }).fill('traces/mooncake.jsonl');
    const speed = page.getByRole('spinbutton', { name: 'Speed (×)' });
    await speed.fill('0');
    await page.locator('#run-button').click();
    assert.match(await page.locator('#form-error').innerText(), /^Speed \(×\): enter a number from above 0/);
    await speed.fill('2.5');
    await page.locator('#run-button').click();
    assert.deepEqual((await runsPosted(page)).at(-1)!.workload, { concurrency: 2, requests: 20, maxTokens: 128, promptTokens: 64,
      traffic: { kind: 'trace', path: 'traces/mooncake.jsonl', speed: 2.5 } });

    // a ramp: its shape and rates, with the requests and lengths; not the concurrency
    await pickWorkload(page, 'Ramp');
    assert.deepEqual(await shownFields(page), ['Ramp', 'From (req/s)', 'To (req/s)', 'Requests', 'Max tokens', 'Prompt tokens']);
    await page.getByRole('combobox', { name: 'Ramp' }).selectOption('exponential');
    await page.getByRole('spinbutton', { name: 'From (req/s)' }).fill('0.5');
    await page.getByRole('spinbutton', { name: 'To (req/s)' }).fill('16');
    await page.locator('#run-button').click();
    assert.deepEqual((await runsPosted(page)).at(-1)!.workload, { concurrency: 2, requests: 20, maxTokens: 128, promptTokens: 64,
      traffic: { kind: 'ramp', shape: 'exponential', from: 0.5, to: 16 } });

    // back to single prompts: no traffic
    await pickWorkload(page, 'Single prompts');
    assert.equal(await page.getByRole('spinbutton', { name: 'Concurrency' }).count(), 1, 'the concurrency is named for requests again');
    await page.locator('#run-button').click();
    assert.equal('traffic' in ((await runsPosted(page)).at(-1)!.workload as object), false);
    assert.deepEqual(problems, []);
    assert.deepEqual(await cspViolations(page), []);
  } finally {
    await close();
  }
});

test('the form starts from the traffic last run (its kind picked, its values), and a hidden field of the wrong kind never blocks a run', async () => {
  const state = fullState({ running: undefined, workload: { concurrency: 3, requests: 20, maxTokens: 128, promptTokens: 64, traffic: { kind: 'trace', path: '/w/t.csv', speed: 4 } } });
  const { page, close } = await open(state);
  try {
    assert.equal(await page.getByRole('combobox', { name: 'Workload' }).inputValue(), 'trace');
    assert.equal(await page.getByRole('textbox', { name: 'Trace (Mooncake JSONL or Azure CSV)' }).inputValue(), '/w/t.csv');
    assert.equal(await page.getByRole('spinbutton', { name: 'Speed (×)' }).inputValue(), '4');
    // a bad request count in the single-prompt fields, hidden now: the trace runs anyway, with the settings' count
    await pickWorkload(page, 'Single prompts');
    await page.getByRole('spinbutton', { name: 'Requests' }).fill('0');
    await pickWorkload(page, 'Trace replay');
    await page.locator('#run-button').click();
    assert.deepEqual((await runsPosted(page)).at(-1)!.workload, { concurrency: 3, requests: 20, maxTokens: 128, promptTokens: 64, traffic: { kind: 'trace', path: '/w/t.csv', speed: 4 } });
  } finally {
    await close();
  }
});

test('axe: each workload kind\'s fields have no serious or critical violation, light and dark', { timeout: 120_000 }, async () => {
  const found: string[] = [];
  for (const theme of ['light', 'dark'] as ThemeName[]) {
    const { page, close } = await open(fullState({ running: undefined }), theme);
    try {
      for (const label of ['Conversations', 'Conversations from a file', 'Trace replay', 'Ramp']) {
        await pickWorkload(page, label);
        await page.locator('#run-button').click(); // an error shown too (the file's, where there is one)
        const vs = await axeViolations(page, { include: '#app > .section' });
        if (vs.length) found.push(`${theme} ${label}:\n  ${describeViolations(vs)}`);
      }
    } finally {
      await close();
    }
  }
  assert.equal(found.length, 0, found.join('\n'));
});
