// What every run file says of itself: its format, version and the tool that wrote it. Apart from
// runFile.ts and runSchema.ts so that writing a run (the runner, the sweeps) does not pull in the
// reader and its schema library.
import { version as packageVersion } from '../../../package.json';

export const RUN_FORMAT = 'llm-profiler.run' as const;
export const RUN_VERSION = 1 as const;
export const TOOL_NAME = 'llm-profiler' as const;
export const TOOL_VERSION: string = packageVersion;
