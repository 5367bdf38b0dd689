// A tiny test runner for inside the extension host (mocha is not a dependency): tests run in order,
// each with a timeout; the last line printed is "N passed, N failed". Once the last test that
// measures time has run, it prints TIMING_DONE: the host runner starts other workbenches beside the
// rest of the suite only then.
export interface HostTest {
  readonly name: string;
  readonly fn: () => Promise<void> | void;
  readonly timeoutMs?: number;
  /** It measures time: nothing else may run on the machine until it has. */
  readonly measuresTime?: boolean;
}

/** Printed once no test that measures time is left to run (test/host/runInCodeServer.ts waits for it). */
export const TIMING_DONE = '[suite] the tests that measure time have run';

const tests: HostTest[] = [];

export function hostTest(name: string, fn: HostTest['fn'], timeoutMs = 60_000): void {
  tests.push({ name, fn, timeoutMs });
}

/** A test that measures time (activation, the extension host's pauses): it runs with nothing else beside it. */
export function hostTimingTest(name: string, fn: HostTest['fn'], timeoutMs = 60_000): void {
  tests.push({ name, fn, timeoutMs, measuresTime: true });
}

export async function runAll(): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  // LLMP_HOST_GREP (a regular expression over test names) runs some tests only, while developing
  const grep = process.env.LLMP_HOST_GREP ? new RegExp(process.env.LLMP_HOST_GREP) : undefined;
  const chosen = tests.filter((t) => !grep || grep.test(t.name));
  let timingLeft = chosen.filter((t) => t.measuresTime).length;
  if (!timingLeft) console.log(TIMING_DONE);
  for (const t of chosen) {
    const started = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(t.fn),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${t.timeoutMs} ms`)), t.timeoutMs); }),
      ]);
      passed++;
      console.log(`  ok   ${t.name} (${Date.now() - started} ms)`);
    } catch (err) {
      failed++;
      console.log(`  FAIL ${t.name} (${Date.now() - started} ms)\n${String((err as Error).stack ?? err).split('\n').map((l) => `       ${l}`).join('\n')}`);
    } finally {
      clearTimeout(timer);
    }
    if (t.measuresTime && --timingLeft === 0) console.log(TIMING_DONE);
  }
  console.log(`${passed} passed, ${failed} failed`);
  return { passed, failed };
}

/** Polls until `check` returns a value (not undefined/false), or throws with `what`. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
