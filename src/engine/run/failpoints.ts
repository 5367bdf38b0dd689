// Failpoints: faults a test switches on from outside, so that what the run does when they happen for
// real is tested on the real code (a real thread that really dies), not on a mock. Read from the
// environment variable LLM_PROFILER_FAILPOINTS: a comma-separated list of NAME:WHICH@COUNT. Unset, or
// naming nothing this code knows, nothing changes. The one failpoint:
//
//   worker-exit:T@N   worker thread T (numbered from 1, as "worker thread T of n" in the run file),
//                     once N of its requests have finished, hands nothing more to its client and, as
//                     soon as the last request it sent has had FAILPOINT_WIRE_MS to reach the wire
//                     (the server has every request the thread has in flight), sends back the records
//                     it has and ends itself with process.exit(FAILPOINT_EXIT_CODE), its other
//                     requests in flight.
//
// Example: LLM_PROFILER_FAILPOINTS=worker-exit:2@5 llm-profiler run --workers 2 …

export const FAILPOINTS_ENV = 'LLM_PROFILER_FAILPOINTS';
/** The exit code of a thread that a failpoint ended (EX_SOFTWARE): told apart from a crash's 1. */
export const FAILPOINT_EXIT_CODE = 70;
/** How long after its last send a thread that a failpoint ends waits before it ends, ms. */
export const FAILPOINT_WIRE_MS = 20;

/** The COUNT of the failpoint NAME:WHICH@COUNT, or undefined when it is not set. */
export function failpointAt(name: string, which: string, env: Readonly<Record<string, string | undefined>> = process.env): number | undefined {
  for (const item of (env[FAILPOINTS_ENV] ?? '').split(',')) {
    const m = /^\s*([a-z-]+):([^@\s]+)@(\d+)\s*$/.exec(item);
    if (m && m[1] === name && m[2] === which) return Number(m[3]);
  }
  return undefined;
}
