// The report timeline's rows of a multi-turn run (webview/report/lanes.ts, pure): each session's
// turns on one row in turn order, a request outside any session (the warmup) on its own row, rows
// in the order they were due (sessions due together by their number), and the think time between
// a session's turns as the gaps of its row.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLanes, groupBySession, hasSessions, lanesOfRow, rowCount, rowGaps, rowNeighbours, rowOfLane, ungrouped } from '../../webview/report/lanes';
import { fixtureRun, fixtureSessionRun } from '../support/fixtureRuns';

test('a row per session, its turns in order; the warmup on a row of its own; rows in the order they were due', () => {
  const run = fixtureSessionRun({ seed: 5, sessions: 6, turns: 5, concurrency: 3, thinkTimeMs: 400 });
  const flat = buildLanes(run);
  assert.ok(hasSessions(flat));
  const m = groupBySession(flat);
  assert.equal(m.lanes, flat.lanes, 'the lanes themselves are untouched (a request is still a lane)');
  assert.equal(rowCount(m), 7);
  assert.deepEqual(m.rows!.sessions, [undefined, 0, 1, 2, 3, 4, 5], 'the warmup first; sessions due at once by their number');
  for (let row = 1; row < 7; row++) {
    const turns = lanesOfRow(m, row).map((i) => m.lanes[i]!.request);
    assert.deepEqual(turns.map((r) => r.turn), [0, 1, 2, 3, 4]);
    assert.ok(turns.every((r) => r.session === m.rows!.sessions[row]));
    for (const i of lanesOfRow(m, row)) assert.equal(rowOfLane(m, i), row);
  }
  // the first three sessions were due at the same moment (three in flight): their rows follow their numbers
  const due = [1, 2, 3].map((row) => m.lanes[lanesOfRow(m, row)[0]!]!.scheduled);
  assert.equal(new Set(due).size, 1);
  // a row per request again
  const back = ungrouped(m);
  assert.equal(back.rows, undefined);
  assert.equal(rowCount(back), run.requests.length);
  assert.equal(rowOfLane(back, 5), 5);
});

test('the gaps of a session\'s row are its think times: from a reply\'s end to the next turn being due', () => {
  const run = fixtureSessionRun({ seed: 8, sessions: 3, turns: 4, concurrency: 3, thinkTimeMs: 750 });
  const m = groupBySession(buildLanes(run));
  for (let row = 1; row < rowCount(m); row++) {
    const lanes = lanesOfRow(m, row).map((i) => m.lanes[i]!);
    const gaps = rowGaps(m, row);
    assert.equal(gaps.length, 2 * (lanes.length - 1));
    for (let k = 1; k < lanes.length; k++) {
      assert.equal(gaps[2 * (k - 1)], lanes[k - 1]!.end);
      assert.equal(gaps[2 * (k - 1) + 1], lanes[k]!.scheduled);
      assert.ok(Math.abs(lanes[k]!.scheduled - lanes[k - 1]!.end - 750) < 1e-3, 'the think time the run waited (to epoch ms\' float resolution)');
    }
    const mid = lanesOfRow(m, row)[1]!;
    const n = rowNeighbours(m, mid);
    assert.deepEqual([n.position, n.count, n.prev?.request.turn, n.next?.request.turn], [1, 4, 0, 2]);
  }
  assert.equal(rowGaps(m, 0).length, 0, 'the warmup\'s row has no gap');
});

test('a run without sessions has none to group', () => {
  const flat = buildLanes(fixtureRun({ seed: 3 }));
  assert.equal(hasSessions(flat), false);
  assert.equal(rowCount(flat), flat.lanes.length);
  assert.deepEqual(lanesOfRow(flat, 2), [2]);
  assert.deepEqual(rowNeighbours(flat, 2), { position: 0, count: 1 });
});
