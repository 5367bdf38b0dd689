// What the extension takes from the engine to run jobs, behind one module loaded on the first run
// (lazy.ts `loadEngine`). esbuild.mjs builds it as dist/engine.js, apart from dist/extension.js:
// undici, the runner and the local server launcher are never compiled at activation.
export { executeJob } from '../jobs/execute';
export { buildCacheCheckJob, buildDialJob, buildRunJob, buildSweepJob } from '../jobs/build';
// "Compare two endpoints": an interleaved A/B, two run files
export { buildAbJob, executeAbJob } from '../jobs/ab';
export { localEndpoint, startLocalServerFor } from '../jobs/resolve';
export { startLocalServer } from '../localServer/launcher';
export { checkReach, detectApi, reachable } from '../engine/transport/detect';
export { buildNetwork, networkSecrets } from '../jobs/networkSpec';
export { systemCa } from '../jobs/systemCa';
export { insecureWarning, proxyFor, shownProxy } from '../engine/transport/connections';
// llmProfiler.otlp.endpoint: each finished run's metrics over OTLP (the SDK itself loads on the first send)
export { exportRunToOtlp, otlpHeadersFromEnv, otlpTimeoutFromEnv } from '../engine/files/otlp';
// a run's journal (every finished request, as it finishes) and the runs a dead window left
export { JobJournal } from '../jobs/journal';
export { leftJournals, recoverJournal } from '../jobs/recovery';
