// The report's header says how synthetic prompts were sized, truthfully (src/present/workloadText.ts
// promptWords, RunFile.promptLength): live, before any reply, only the length asked (nothing of a
// count the server has not had the chance to report); a saved run the tokens the server counted and
// the way they were sized: the tokenizer then the warmup's usage, the usage with warmup requests
// added, a tokenizer the usage overruled, a template longer than the length asked. Headless Chromium;
// needs `npm run build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { PromptLength, RunFile } from '../../src/engine/core/types';
import { fixtureRun } from '../support/fixtureRuns';
import { openReport, rendered, reportSession, sendToPage } from '../support/reportHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = reportSession();

const base = fixtureRun({ seed: 5, requests: 6, concurrency: 1, errorRate: 0 });
const synthetic = (tokens: number) => ({ ...base.workload, prompt: { kind: 'synthetic' as const, tokens, sharedPrefix: false, sizing: 'server' as const } });

/** A saved run sized as `pl` says, its measured requests counted `count` by the server. */
function sized(id: string, pl: Omit<PromptLength, 'asked' | 'sent'>, count: number, asked = 256): RunFile {
  const requests = base.requests.map((r) => ({ ...r, promptTokens: count }));
  const measured = requests.filter((r) => !r.warmup).length;
  return { ...base, id, workload: synthetic(asked), requests, promptLength: { ...pl, asked, sent: { p50: count, min: count, max: count, requests: measured } } };
}

async function headerOf(page: Page): Promise<string> {
  return (await page.locator('.run-header .meta').first().textContent())!;
}

test('live, before any reply: the length asked, and no word of a count the server reported or not', async () => {
  mkdirSync(artifacts, { recursive: true });
  const run: RunFile = { ...base, id: 'prompt-live', workload: synthetic(256), requests: [] };
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    await sendToPage(page, { type: 'liveStart', runId: run.id, run });
    await page.waitForSelector('body[data-view="live"]');
    const meta = await headerOf(page);
    assert.ok(meta.split(' · ').includes('256-token prompts asked'), meta);
    assert.doesNotMatch(meta, /reported no count/);
    await page.locator('.run-header').screenshot({ path: join(artifacts, 'prompt-length-live.png') });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('saved: the tokens counted and how they were sized, in the words of each way', async () => {
  const cases: readonly [RunFile, string][] = [
    [sized('pl-tok-usage', { method: 'tokenize', words: 190, tokenizer: 'llama.cpp-text', usageCorrected: true }, 256),
      "256-token prompts as the server counted them (256 asked, sized with the server's tokenizer, then moved by the warmup's usage)"],
    [sized('pl-usage', { method: 'usage', words: 184, usageCorrected: true, addedWarmup: 2 }, 255),
      "255-token prompts as the server counted them (256 asked, sized from the warmup's usage, 2 warmup requests added)"],
    [sized('pl-overruled', { method: 'usage', words: 180, tokenizer: 'vllm', usageCorrected: true, addedWarmup: 1 }, 257),
      "257-token prompts as the server counted them (256 asked, sized from the warmup's usage, 1 warmup request added; the server's tokenizer was off by more than 2×)"],
    [sized('pl-shortest', { method: 'tokenize', words: 1, tokenizer: 'vllm', shortest: true }, 27, 8),
      "27-token prompts as the server counted them (8 asked; the shortest the server's chat template allows, 1 word, sized with the server's tokenizer)"],
  ];
  for (const [run, expected] of cases) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
    try {
      await rendered(page);
      const meta = await headerOf(page);
      assert.ok(meta.split(' · ').includes(expected), `${run.id}: ${meta}`);
      await page.locator('.run-header').screenshot({ path: join(artifacts, `prompt-length-${run.id}.png`) });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});
