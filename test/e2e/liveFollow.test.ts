// The live timeline of a long run in headless Chromium: it follows the latest requests (a frame
// draws at most that many lanes however many the run holds, so a redraw after an hour costs what one
// after a minute does: `npm run bench:soak -- --live`), Home shows the whole run and stays there as
// updates come, End (or the Latest button) follows again. Needs `npm run build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { Progress } from '../../src/engine/core/types';
import { fixtureRun } from '../support/fixtureRuns';
import { openReport, reportSession, sendToPage } from '../support/reportHarness';

const session = reportSession();

/** What the live timeline drew in its latest frame (timeline.ts sets these on the canvas). */
function drawn(page: Page): Promise<{ lanes: number; lanesDrawn: number; laneStart: number; laneEnd: number; frames: number }> {
  return page.$eval('.block.timeline canvas', (c) => {
    const d = (c as HTMLCanvasElement).dataset;
    return { lanes: Number(d.lanes), lanesDrawn: Number(d.lanesDrawn), laneStart: Number(d.laneStart), laneEnd: Number(d.laneEnd), frames: Number(d.frames) };
  });
}

async function frameAfter(page: Page, frames: number): Promise<ReturnType<typeof drawn>> {
  await page.waitForFunction((n) => Number(document.querySelector<HTMLCanvasElement>('.block.timeline canvas')?.dataset.frames) > n, frames);
  return drawn(page);
}

test('live: a run longer than the followed lanes draws only the latest 2,000, Home shows them all, End follows again', async () => {
  const run = fixtureRun({ seed: 41, requests: 2600, warmup: 0, concurrency: 16, chunksPerRequest: 6, errorRate: 0, stallEveryMs: 0 });
  const sorted = run.requests.slice().sort((a, b) => a.scheduledAt - b.scheduledAt || a.index - b.index);
  const first = sorted.slice(0, 2400);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    await sendToPage(page, { type: 'liveStart', runId: run.id, run: { ...run, requests: first } });
    await page.waitForSelector('body[data-view="live"]');
    let d = await drawn(page);
    assert.equal(d.lanes, 2400);
    assert.ok(d.lanesDrawn <= 2000 && d.lanesDrawn >= 1900, `the latest lanes drawn: ${JSON.stringify(d)}`);
    assert.deepEqual([d.laneStart, d.laneEnd], [400, 2400], 'the view ends at the latest lane');
    const progress = (n: number): Progress => ({ runId: run.id, succeeded: n, failed: 0, finished: n, inFlight: 0, elapsedS: 1 });
    await sendToPage(page, { type: 'liveUpdate', runId: run.id, records: sorted.slice(2400, 2500), progress: progress(2500) });
    d = await frameAfter(page, d.frames);
    assert.deepEqual([d.lanes, d.laneStart, d.laneEnd], [2500, 500, 2500], 'it follows the new lanes');
    await page.focus('.block.timeline canvas');
    await page.keyboard.press('Home');
    d = await frameAfter(page, d.frames);
    assert.equal(d.lanesDrawn, 2500, 'Home: the whole run');
    await sendToPage(page, { type: 'liveUpdate', runId: run.id, records: sorted.slice(2500, 2550), progress: progress(2550) });
    d = await frameAfter(page, d.frames);
    assert.deepEqual([d.lanes, d.lanesDrawn, d.laneStart], [2550, 2550, 0], 'the whole run, as it grows');
    await page.keyboard.press('End');
    d = await frameAfter(page, d.frames);
    assert.deepEqual([d.laneStart, d.laneEnd], [550, 2550], 'End: the latest lanes again');
    await page.keyboard.press('Home');
    d = await frameAfter(page, d.frames);
    await page.getByRole('button', { name: 'Latest' }).click();
    d = await frameAfter(page, d.frames);
    assert.deepEqual([d.laneStart, d.laneEnd], [550, 2550], 'the Latest button too');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
