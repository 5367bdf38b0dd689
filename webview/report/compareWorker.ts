// The report's comparison thread (bundled as dist/webview/compareWorker.js, started by
// compareRunner.ts): a bootstrap over two large runs takes seconds (two runs of 10,000 requests: about
// 4 s), which on the page's thread would freeze the report; here the page stays responsive.
import { compareRuns } from '../../src/engine/analysis/compare';
import type { CompareAnswer, CompareRequest } from './compareRunner';

const scope = self as unknown as { onmessage: ((e: MessageEvent<CompareRequest>) => void) | null; postMessage(m: CompareAnswer): void };

scope.onmessage = (e) => {
  const { id, base, next, resamples } = e.data;
  try {
    scope.postMessage({ id, comparison: compareRuns(base, next, resamples === undefined ? {} : { resamples }) });
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
