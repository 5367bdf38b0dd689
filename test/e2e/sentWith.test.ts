// The report says what a run's prompts were sent with: a real run (the jobs layer against a scripted
// server on 127.0.0.1) of a prompt file whose maxTokens is 256 while the run command's default is
// 128, shown in headless Chromium with the real bundle: the header says "max 256 tokens (from the
// file)", live from the first frame and in the final report, and "Sent with" lists each setting
// with its source. Needs `npm run build` (dist/webview/report.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRunJob } from '../../src/jobs/build';
import { executeJob } from '../../src/jobs/execute';
import { OptionValues } from '../../src/jobs/values';
import type { RunFile } from '../../src/engine/core/types';
import { openReport, reportSession, rendered, sendToPage } from '../support/reportHarness';
import { startScriptedServer } from '../support/scriptedServer';

const session = reportSession();

const PROMPT_YML = ['name: answer', 'modelParameters:', '  maxTokens: 256', '  topP: 0.9', 'responseFormat: json_object', 'messages:', '  - role: user', '    content: What is TTFT?', ''].join('\n');

/** A run of the prompt file with --temperature 0.5 (and no --max-tokens): its first frame and its final file. */
async function realRun(): Promise<{ skeleton: RunFile; run: RunFile }> {
  const server = await startScriptedServer({ tokens: 3, ttftMs: 1, itlMs: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'sent-with-e2e-'));
  try {
    const file = join(dir, 'answer.prompt.yml');
    writeFileSync(file, PROMPT_YML);
    const values = OptionValues.of({ url: server.url, api: 'openai-chat', requests: 3, warmup: 0, promptFile: file, temperature: 0.5 });
    const { job } = await buildRunJob(values, { cwd: dir });
    let skeleton: RunFile | undefined;
    const run = await executeJob(job, { onStart: (s) => (skeleton = s.skeleton) });
    assert.ok(server.log.filter((l) => l.path === '/v1/chat/completions').every((l) => l.body.max_tokens === 256 && l.body.temperature === 0.5));
    return { skeleton: skeleton!, run };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the report header shows the prompt file's max 256 tokens, not the workload's 128, live and final; Sent with names each source", async () => {
  const { skeleton, run } = await realRun();
  assert.equal(run.workload.maxTokens, 128);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    await sendToPage(page, { type: 'liveStart', runId: run.id, run: skeleton });
    await page.waitForSelector('body[data-view="live"]');
    const liveMeta = (await page.textContent('.run-header .meta')) ?? '';
    assert.match(liveMeta, /max 256 tokens \(from the file\), temperature 0\.5 \(set by you\), top_p 0\.9 \(from the file\), JSON output \(from the file\)/);
    assert.doesNotMatch(liveMeta, /max 128/);

    await sendToPage(page, { type: 'liveEnd', runId: run.id, run });
    await rendered(page);
    const meta = (await page.textContent('.run-header .meta')) ?? '';
    assert.match(meta, /max 256 tokens \(from the file\)/);
    assert.doesNotMatch(meta, /max 128/);
    const rows = await page.$$eval('table.sent-with tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('th, td'), (c) => c.textContent)));
    assert.deepEqual(rows, [
      ['answer', 'max tokens', '256', 'from the file'],
      ['temperature', '0.5', 'set by you'],
      ['top_p', '0.9', 'from the file'],
      ['response format', 'JSON', 'from the file'],
    ]);
    assert.equal(await page.textContent('#h-sent-with'), 'Sent with');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a synthetic run has no Sent with section and its header keeps the plain max tokens', async () => {
  const server = await startScriptedServer({ tokens: 2, ttftMs: 1, itlMs: 1 });
  let run: RunFile;
  try {
    const { job } = await buildRunJob(OptionValues.of({ url: server.url, api: 'openai-chat', requests: 2, warmup: 0, maxTokens: 64, promptTokens: 16 }));
    run = await executeJob(job);
  } finally {
    await server.close();
  }
  assert.equal(run.prompts, undefined);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    assert.match((await page.textContent('.run-header .meta')) ?? '', /· max 64 tokens ·/);
    assert.equal(await page.$('table.sent-with'), null);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
