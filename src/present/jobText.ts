// A job in one line, for the log and notifications: what will be sent, how hard, where. Pure.
import type { Job } from '../jobs/job';
import { plannedSent, sentLine } from './sentText';
import { modeAt } from './workloadText';

function where(job: Job): string {
  if (job.kind === 'dial') return 'the local server';
  const t = job.target;
  return t.kind === 'local' ? `the local server (${t.server.parallel} slots${t.server.slotContext !== undefined ? ` of ${t.server.slotContext} tokens` : ''})` : `${t.url} (${t.api}${t.model ? `, ${t.model}` : ''})`;
}

export function describeJob(job: Job): string {
  if (job.kind === 'dial') {
    const d = job.dial;
    return `prefill dial on ${where(job)} at chunk sizes ${d.batchSizes.join(', ')}: ${d.decodeStreams} short decodes + ${d.longPromptTokens}-token prompts at ${d.longRate}/s, ${d.durationS} s each`;
  }
  const w = job.workload;
  if (job.kind === 'cache-check') {
    const what = job.prompts ? `${job.prompts.length} prompt${job.prompts.length === 1 ? '' : 's'}` : w.prompt.kind === 'synthetic' ? `a ${w.prompt.tokens}-token prompt` : 'the prompts';
    return `${where(job)}: prefix cache check, ${what} cold, again and varied, ${w.requests ?? 0} requests one at a time`;
  }
  const amount = w.requests !== undefined ? `${w.requests} requests` : w.durationS !== undefined ? `${w.durationS} s` : w.sessions !== undefined ? `${w.sessions} session${w.sessions === 1 ? '' : 's'}` : w.prompt.kind === 'trace' ? 'the whole trace' : 'every conversation';
  // what the prompts will be sent with: a prompt file's own max tokens beat the workload's default
  const out = sentLine({ workload: w, prompts: plannedSent(w, job.prompts) });
  if (job.kind === 'sweep') {
    const dim = job.dimension === 'concurrency' ? 'concurrency' : job.dimension === 'rate' ? 'request rate' : 'prompt length';
    return `${where(job)}: sweep over ${dim} ${job.values.join(', ')}, ${amount} per point, ${out}`;
  }
  const load = modeAt(w.mode);
  return `${where(job)}: ${amount} ${load}, ${out}`;
}

/**
 * What a job's prompt file pulled into what is sent, for the surfaces to say before it runs:
 * "chat.prompty pulled in: files /repo/customer.json, /repo/cat.png; environment variables TOPIC".
 * Undefined when it pulled in nothing (or there is no prompt file).
 */
export function pulledInLine(job: Job): string | undefined {
  if (job.kind === 'dial' || job.workload.prompt.kind !== 'file') return undefined;
  const { path, pulledIn } = job.workload.prompt;
  if (!pulledIn || (pulledIn.files.length === 0 && pulledIn.env.length === 0)) return undefined;
  const parts = [
    ...(pulledIn.files.length > 0 ? [`${pulledIn.files.length === 1 ? 'file' : 'files'} ${pulledIn.files.join(', ')}`] : []),
    ...(pulledIn.env.length > 0 ? [`${pulledIn.env.length === 1 ? 'environment variable' : 'environment variables'} ${pulledIn.env.join(', ')}`] : []),
  ];
  const name = path.split(/[\\/]/).pop() ?? path;
  return `${name} pulled in: ${parts.join('; ')}`;
}
