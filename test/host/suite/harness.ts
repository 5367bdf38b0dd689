// A tiny test runner for inside the extension host (mocha is not a dependency): tests run in order,
// each with a timeout; the last line printed is "N passed, N failed".
export interface HostTest {
  readonly name: string;
  readonly fn: () => Promise<void> | void;
  readonly timeoutMs?: number;
}

const tests: HostTest[] = [];

export function hostTest(name: string, fn: HostTest['fn'], timeoutMs = 60_000): void {
  tests.push({ name, fn, timeoutMs });
}

export async function runAll(): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  // LLMP_HOST_GREP (a regular expression over test names) runs some tests only, while developing
  const grep = process.env.LLMP_HOST_GREP ? new RegExp(process.env.LLMP_HOST_GREP) : undefined;
  for (const t of tests) {
    if (grep && !grep.test(t.name)) continue;
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
