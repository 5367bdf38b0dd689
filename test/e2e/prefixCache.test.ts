// A cache-check run in the report webview (headless Chromium): its verdict under the headline, with the
// run file's figures. Needs `npm run build` (dist/webview/report.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunFile } from '../../src/engine/core/types';
import { formatInt, formatMs } from '../../src/present/units';
import { fixtureRun } from '../support/fixtureRuns';
import { openReport, reportSession, rendered } from '../support/reportHarness';

const session = reportSession();


test('a cache-check run shows its verdict: TTFT cold, warm and variant, the cached tokens, the sentence', async () => {
  const message = 'prefix cache: warm TTFT 6.9 ms vs 44.2 ms cold (−84%), 1,023 cached tokens reported: the server caches prompts (a prompt that differs only in its last words: 8.1 ms; median of 3 rounds)';
  const run: RunFile = { ...fixtureRun({ seed: 5, requests: 9 }), prefixCache: { coldTtftMs: 44.2, warmTtftMs: 6.9, variantTtftMs: 8.1, cachedTokens: 1023, hit: true, rounds: 3, message } };
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const section = page.locator('section.prefix-cache-check');
    assert.equal(await section.getAttribute('data-hit'), 'true');
    assert.equal(await section.locator('[data-figure="cache-cold"] .value').textContent(), formatMs(44.2));
    assert.equal(await section.locator('[data-figure="cache-warm"] .value').textContent(), formatMs(6.9));
    assert.equal(await section.locator('[data-figure="cache-variant"] .value').textContent(), formatMs(8.1));
    assert.equal(await section.locator('[data-figure="cache-tokens"] .value').textContent(), formatInt(1023));
    assert.equal(await section.locator('[data-figure="cache-verdict"] .value').textContent(), 'caches prompts');
    assert.equal(await section.locator('.cache-message').textContent(), message);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
  // any other run: no such section
  const plain = await openReport(session.browser, session.server.page({ kind: 'run', run: fixtureRun({ seed: 6, requests: 5 }) }));
  try {
    await rendered(plain.page);
    assert.equal(await plain.page.locator('section.prefix-cache-check').count(), 0);
  } finally {
    await plain.context.close();
  }
});
