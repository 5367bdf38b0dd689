// A test file that must leave no promise rejection unhandled: collected while its tests run, and
// asserted empty after them.
import { after } from 'node:test';
import assert from 'node:assert/strict';

export function assertNoUnhandledRejections(): void {
  const unhandled: unknown[] = [];
  const onUnhandled = (r: unknown): void => {
    unhandled.push(r);
  };
  process.on('unhandledRejection', onUnhandled);
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, [], 'no unhandled rejections');
  });
}
