// The failpoint switch (src/engine/run/failpoints.ts): NAME:WHICH@COUNT items read from
// LLM_PROFILER_FAILPOINTS, anything else ignored, nothing set when the variable is unset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FAILPOINTS_ENV, failpointAt } from '../../src/engine/run/failpoints';

test('failpointAt: the count of the named failpoint for that thread, else undefined', () => {
  const env = { [FAILPOINTS_ENV]: 'worker-exit:2@5, other:1@3,worker-exit:x@y,worker-exit:3@12' };
  assert.equal(failpointAt('worker-exit', '2', env), 5);
  assert.equal(failpointAt('worker-exit', '3', env), 12);
  assert.equal(failpointAt('worker-exit', '1', env), undefined);
  assert.equal(failpointAt('other', '1', env), 3);
  assert.equal(failpointAt('worker-exit', 'x', env), undefined, 'a count that is not a number is no failpoint');
  assert.equal(failpointAt('worker-exit', '2', {}), undefined);
  assert.equal(failpointAt('worker-exit', '2', { [FAILPOINTS_ENV]: 'worker-exit:2@5junk' }), undefined);
});
