// What a format's reader returns, and the `llmProfiler` block every YAML-bearing format may carry:
//   llmProfiler:
//     slo: { ttft: 500, tpot: 50, itl: 100, e2e: 20000 }   # milliseconds
import type { PromptFileParse } from './types';
import type { SloSpec } from '../../core/types';
import { isObject } from '../../core/json';
import { sloFromObject } from '../../core/slo';
import type { Reader } from './reader';
import { keyLine, type Yaml } from './yamlDoc';

export type FileBody = Pick<PromptFileParse, 'prompts' | 'slo' | 'model'>;

export function sloOf(r: Reader, y: Yaml | undefined): SloSpec | undefined {
  const block = y?.value.llmProfiler;
  if (block === undefined || y === undefined) return undefined;
  const line = keyLine(y, ['llmProfiler'], 0);
  if (!isObject(block)) {
    r.warn('llmProfiler must be a mapping, e.g. llmProfiler: { slo: { ttft: 500 } }', line);
    return undefined;
  }
  const raw = block.slo;
  if (raw === undefined) return undefined;
  const { slo, problems } = sloFromObject(raw);
  const sloLine = keyLine(y, ['llmProfiler', 'slo'], line);
  for (const p of problems) r.warn(`llmProfiler.slo: ${p}`, sloLine);
  return slo;
}
