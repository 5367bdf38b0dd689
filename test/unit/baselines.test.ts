// Baselines (src/extension/baselines.ts, comparisons.ts, baselineText.ts): a run pinned for its
// endpoint (URL and model) or its prompt file, kept in the workspace's state so a pin survives a
// reload; which baseline a run is compared with; each pair worked out once, lazily; what counts as a
// regression; and the CodeLens's and the sidebar's words for it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareRuns } from '../../src/engine/analysis/compare';
import { comparability } from '../../src/engine/analysis/comparable';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { rowSentence } from '../../src/present/compareText';
import { BASELINES_KEY, BaselineStore, endpointKey, type StateStore } from '../../src/extension/baselines';
import { baselineLens, regressionLines } from '../../src/extension/baselineText';
import { baselineVerdict, Comparisons, regressedRows } from '../../src/extension/comparisons';
import type { ComparedPair } from '../../src/extension/compareThread';
import { indexEntry, PROMPT_REF_KEY, type RunIndexEntry } from '../../src/extension/runStore';
import { fixtureRun, summarizeFixture } from '../support/fixtureRuns';

/**
 * VS Code's workspace state as it behaves across a reload: values kept as JSON in a file (its
 * state.vscdb), read back by a new instance. An `update` is written before it resolves.
 */
class FileMemento implements StateStore {
  readonly #file: string;
  #values: Record<string, unknown>;
  constructor(file: string) {
    this.#file = file;
    try { this.#values = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>; } catch { this.#values = {}; }
  }
  get<T>(key: string): T | undefined { return this.#values[key] as T | undefined; }
  async update(key: string, value: unknown): Promise<void> {
    this.#values = { ...this.#values, [key]: JSON.parse(JSON.stringify(value)) };
    writeFileSync(this.#file, JSON.stringify(this.#values));
  }
}

function tempState(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-baselines-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'state.json');
}

/** A run list entry: the fields baselines are keyed by. */
function entry(id: string, startedAt: string, o: Partial<RunIndexEntry> = {}): RunIndexEntry {
  return { id, path: `/runs/${id}.json`, startedAt, endpointName: 'vllm', url: 'http://gpu:8000/v1', model: 'm-7b', completed: 10, failed: 0, cancelled: false, what: 'c=4 · 64 req', ...o };
}

test('an endpoint is keyed by its URL (trailing slashes, the host\'s case aside) and its model', () => {
  assert.equal(endpointKey('http://GPU:8000/v1/', 'm-7b'), 'http://gpu:8000/v1 m-7b');
  assert.equal(endpointKey('http://gpu:8000/v1', 'm-7b'), endpointKey('http://gpu:8000/v1//', 'm-7b'));
  assert.notEqual(endpointKey('http://gpu:8000/v1', 'm-7b'), endpointKey('http://gpu:8000/v1', 'm-13b'), 'another model is another baseline');
  assert.notEqual(endpointKey('http://gpu:8000/v1', 'm'), endpointKey('http://gpu:8001/v1', 'm'));
  assert.equal(endpointKey('http://gpu:8000', undefined), 'http://gpu:8000');
});

test('pins survive a reload: a new store over the same workspace state finds them; unpin removes a run from every scope', async (t) => {
  const file = tempState(t);
  const run = entry('r1', '2026-03-01T10:00:00.000Z', { promptFile: '/w/prompts/greet.prompt.md' });
  const store = new BaselineStore(new FileMemento(file));
  let changes = 0;
  store.onDidChange(() => changes++);
  assert.equal(await store.pin(run, 'endpoint'), 'http://gpu:8000/v1 m-7b');
  assert.equal(await store.pin(run, 'promptFile'), '/w/prompts/greet.prompt.md');
  assert.equal(changes, 2);

  // "reload": the state read back from its file by a store that never saw the pins
  const after = new BaselineStore(new FileMemento(file));
  assert.equal(after.get('endpoint', 'http://gpu:8000/v1 m-7b'), 'r1');
  assert.equal(after.get('promptFile', '/w/prompts/greet.prompt.md'), 'r1');
  assert.deepEqual(after.scopesOf('r1').sort(), ['endpoint', 'promptFile']);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8'))[BASELINES_KEY], { version: 1, endpoint: { 'http://gpu:8000/v1 m-7b': 'r1' }, promptFile: { '/w/prompts/greet.prompt.md': 'r1' } });

  // a newer pin replaces the old one for its key, and leaves the other scope alone
  await after.pin(entry('r2', '2026-03-02T10:00:00.000Z'), 'endpoint');
  assert.equal(after.get('endpoint', 'http://gpu:8000/v1 m-7b'), 'r2');
  assert.deepEqual(after.scopesOf('r1'), ['promptFile']);
  assert.equal(await after.unpin('r1'), 1);
  assert.equal(await after.unpin('r1'), 0);
  assert.deepEqual(new BaselineStore(new FileMemento(file)).all(), [{ scope: 'endpoint', key: 'http://gpu:8000/v1 m-7b', runId: 'r2' }]);
});

test('a key is any path a workspace names ("__proto__" too), and a run without a prompt file cannot be a prompt file\'s baseline', async (t) => {
  const store = new BaselineStore(new FileMemento(tempState(t)));
  await store.pin(entry('r1', '2026-03-01T10:00:00.000Z', { promptFile: '__proto__' }), 'promptFile');
  assert.equal(store.get('promptFile', '__proto__'), 'r1');
  assert.equal(store.get('promptFile', 'constructor'), undefined);
  await assert.rejects(store.pin(entry('r2', '2026-03-01T10:00:00.000Z'), 'promptFile'), /was not sent from a prompt file/);
  // a state written by someone else, with junk in it, reads as what it holds that makes sense
  const junk = new FileMemento(tempState(t));
  await junk.update(BASELINES_KEY, { endpoint: { a: 1, b: 'r9' }, promptFile: 'x' });
  assert.deepEqual(new BaselineStore(junk).all(), [{ scope: 'endpoint', key: 'b', runId: 'r9' }]);
});

test('a run is compared with its prompt file\'s baseline, else its endpoint\'s; never itself, a later run, or another prompt of the file', async (t) => {
  const store = new BaselineStore(new FileMemento(tempState(t)));
  const file = '/w/prompts/rows.prompt.yml';
  const endpointBase = entry('e0', '2026-03-01T09:00:00.000Z');
  const promptBase = entry('p0', '2026-03-01T10:00:00.000Z', { promptFile: file, promptRef: { file, startLine: 10, name: 'row 1' } });
  const later = entry('p1', '2026-03-01T11:00:00.000Z', { promptFile: file, promptRef: { file, startLine: 10, name: 'row 1' } });
  const otherPrompt = entry('p2', '2026-03-01T11:30:00.000Z', { promptFile: file, promptRef: { file, startLine: 11, name: 'row 2' } });
  const synthetic = entry('s1', '2026-03-01T12:00:00.000Z');
  const runs = [synthetic, otherPrompt, later, promptBase, endpointBase];
  assert.equal(store.baselineOf(later, runs), undefined, 'nothing pinned');
  await store.pin(endpointBase, 'endpoint');
  assert.deepEqual(store.baselineOf(later, runs), { scope: 'endpoint', base: endpointBase });
  await store.pin(promptBase, 'promptFile');
  assert.deepEqual(store.baselineOf(later, runs), { scope: 'promptFile', base: promptBase }, 'the prompt file\'s is the nearer');
  assert.equal(store.baselineOf(otherPrompt, runs), undefined, 'another prompt of the file');
  assert.deepEqual(store.baselineOf(synthetic, runs), { scope: 'endpoint', base: endpointBase });
  assert.equal(store.baselineOf(endpointBase, runs), undefined, 'not against itself');
  assert.equal(store.baselineOf(entry('old', '2026-03-01T08:00:00.000Z'), runs), undefined, 'not against a later run');
  assert.equal(store.baselineOf(synthetic, runs.filter((r) => r.id !== 'e0')), undefined, 'a pinned run no longer listed is no baseline');
});

/** The fixture run decoding `factor` times slower (each gap between chunks stretched), as another run. */
function slowerDecode(run: RunFile, factor: number, id: string, startedAt: string): RunFile {
  const requests = run.requests.map((r): RequestRecord => {
    const c = r.chunkTimesMs;
    if (c.length < 2) return r;
    const chunkTimesMs = c.map((x) => c[0]! + (x - c[0]!) * factor);
    const last = chunkTimesMs[chunkTimesMs.length - 1]!;
    return { ...r, chunkTimesMs, e2eMs: last, lastByteMs: last + 0.4, tpotMs: r.ttftMs === undefined ? undefined : (last - r.ttftMs) / (r.outputTokens - 1) };
  });
  return { ...run, id, startedAt, requests, summary: summarizeFixture(requests, run.workload) };
}

test('each run against its baseline is worked out once, lazily, and the listeners told; a regression is a slower p50, p90 or throughput', async (t) => {
  const baseRun = { ...fixtureRun({ seed: 71, requests: 120 }), id: 'base', startedAt: '2026-03-01T10:00:00.000Z' };
  const slow = slowerDecode(fixtureRun({ seed: 72, requests: 120 }), 1.3, 'slow', '2026-03-01T11:00:00.000Z');
  const files: Record<string, RunFile> = { '/runs/base.json': baseRun, '/runs/slow.json': slow };
  const calls: string[] = [];
  const comparisons = new Comparisons(async (basePath, runPath) => {
    calls.push(`${basePath} ${runPath}`);
    const [a, b] = [files[basePath]!, files[runPath]!];
    return { comparison: compareRuns(a, b, { resamples: 400 }), problems: comparability(a, b) };
  });
  let told = 0;
  comparisons.onDidChange(() => told++);
  const store = new BaselineStore(new FileMemento(tempState(t)));
  const [eb, es] = [indexEntry(baseRun, '/runs/base.json'), indexEntry(slow, '/runs/slow.json')];
  await store.pin(eb, 'endpoint');
  const runs = [es, eb];
  assert.deepEqual(baselineVerdict(store, comparisons, es, runs), { scope: 'endpoint', base: eb, state: 'pending' });
  assert.equal(baselineVerdict(store, comparisons, es, runs)?.state, 'pending', 'asked again while working: still one job');
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(told, 1);
  const v = baselineVerdict(store, comparisons, es, runs);
  assert.equal(v?.state, 'compared');
  assert.deepEqual(calls, ['/runs/base.json /runs/slow.json'], 'BASE first, NEW second; once');
  const regressed = v!.state === 'compared' ? v!.regressed : [];
  assert.ok(regressed.some((r) => r.key === 'tpot.p50'), regressed.map((r) => r.key).join());
  assert.ok(regressed.every((r) => r.verdict === 'slower' && (r.key === 'throughput' || /\.p(50|90)$/.test(r.key))));
  assert.ok(!regressed.some((r) => r.key.startsWith('ttft')), 'TTFT did not change');
  assert.equal(baselineVerdict(store, comparisons, eb, runs), undefined, 'the baseline has none of its own');

  // the lens: the first row that regressed, its value, the change and the verdict; the tooltip its sentence
  const lens = baselineLens(v!)!;
  const tpot = regressed[0]!;
  assert.match(lens.title, /^(TPOT|ITL|E2E) (p50|p90) [\d.,]+ ms · \+\d+\.\d% vs baseline \(slower\)$/);
  assert.ok(lens.tooltip.startsWith(rowSentence(tpot)));
  assert.match(lens.tooltip, /Baseline: c=4 · 120 req on fixture, .*: open the comparison$/);
  // the sidebar's lines
  const lines = regressionLines(regressed, eb);
  assert.match(lines[0]!, /^(TPOT|ITL|E2E) (p50|p90) \d+\.\d% slower than baseline c=4 · 120 req on fixture, /);
  assert.equal(lines.length, regressed.length);
});

test('the lens when nothing changed says so; not the same workload says that instead of a verdict; a failure says it failed', async (t) => {
  const a = { ...fixtureRun({ seed: 73, requests: 120 }), id: 'a', startedAt: '2026-03-01T10:00:00.000Z' };
  const b = { ...fixtureRun({ seed: 74, requests: 120 }), id: 'b', startedAt: '2026-03-01T11:00:00.000Z' };
  const c8 = { ...fixtureRun({ seed: 75, requests: 120, concurrency: 8 }), id: 'c8', startedAt: '2026-03-01T12:00:00.000Z' };
  const pairOf = (x: RunFile, y: RunFile): ComparedPair => ({ comparison: compareRuns(x, y, { resamples: 400 }), problems: comparability(x, y) });
  const same = pairOf(a, b);
  const store = new BaselineStore(new FileMemento(tempState(t)));
  const ea = indexEntry(a, '/runs/a.json');
  await store.pin(ea, 'endpoint');
  const comparisons = new Comparisons(async (_base, runPath) => {
    if (runPath.endsWith('b.json')) return same;
    if (runPath.endsWith('c8.json')) return pairOf(a, c8);
    throw new Error('the run file is cut short');
  });
  const entries = [indexEntry(b, '/runs/b.json'), indexEntry(c8, '/runs/c8.json'), { ...indexEntry(b, '/runs/gone.json'), id: 'gone' }, ea];
  for (const e of entries) baselineVerdict(store, comparisons, e, entries);
  await new Promise((r) => setTimeout(r, 10));
  const [vb, vc, vg] = entries.slice(0, 3).map((e) => baselineVerdict(store, comparisons, e, entries)!);
  assert.equal(regressedRows(same).length, 0);
  const ttft = same.comparison.rows.find((r) => r.key === 'ttft.p50')!;
  assert.equal(ttft.verdict, 'no-difference');
  assert.match(baselineLens(vb!)!.title, /^TTFT p50 [\d.,]+ ms · [+−]\d+\.\d% vs baseline \(no detectable change\)$/);
  assert.equal(vc!.state, 'not-comparable');
  assert.equal(baselineLens(vc!)!.title, 'not comparable with baseline');
  assert.match(baselineLens(vc!)!.tooltip, /^the load differs: BASE concurrency 4, NEW concurrency 8/);
  assert.equal(vg!.state, 'failed');
  assert.match(baselineLens(vg!)!.tooltip, /failed: the run file is cut short/);
});

test('a prompt run is keyed by its prompt file: the CodeLens\'s file, else the workload\'s', () => {
  const run = fixtureRun({ seed: 76, requests: 12 });
  const lensRun = { ...run, [PROMPT_REF_KEY]: { file: '/w/a.prompt.md', startLine: 0 } };
  assert.equal(indexEntry(lensRun, '/r.json').promptFile, '/w/a.prompt.md');
  const cliRun: RunFile = { ...run, workload: { ...run.workload, prompt: { kind: 'file', path: '/w/b.prompt.yml' } } as RunFile['workload'] };
  assert.equal(indexEntry(cliRun, '/r.json').promptFile, '/w/b.prompt.yml');
  assert.equal(indexEntry(run, '/r.json').promptFile, undefined);
});
