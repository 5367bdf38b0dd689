// Opening another benchmark tool's result as a run: the one entry point every surface calls (the
// CLI's `import`, the extension's "Open benchmark result…", a file dropped on the report panel).
// The format is told from the content, not the name; a file that is none of them, of a version not
// known, truncated or too large is refused with an ImportError naming the file and the problem.
import type { RunFile } from '../types';
import { ImportError } from './common';

export { ImportError } from './common';

export interface ImportOptions {
  /** Percentiles for the summary (default 50, 90, 95, 99). */
  readonly percentiles?: readonly number[];
}

/** Reads `path` (and the files beside it that its tool writes) and returns the run, or throws ImportError. Writes nothing. */
export async function importBenchmarkFile(path: string, _options: ImportOptions = {}): Promise<RunFile> {
  throw new ImportError(path, 'importing is not built yet');
}
