// The quick picks and input boxes of "Profile endpoint": which endpoint, which workload, the custom
// figures. UI only: what they return is turned into a job elsewhere.
import * as vscode from 'vscode';
import { inputProblem } from '../jobs/options';
import { presetWorkload } from '../jobs/presets';
import type { PresetId, PresetInput, WorkloadDefaults } from '../jobs/presets';
import { formatMs } from '../present/units';
import type { ConfigService } from './config';
import type { LocalServerManager } from './localServerManager';
import type { RunsModel } from './runsModel';
import type { Choice } from './targets';
import type { TrustGate } from './trust';

export interface PickerServices {
  readonly config: ConfigService;
  readonly trust: TrustGate;
  readonly runs: RunsModel;
  readonly localServer: LocalServerManager;
}

function validateUrl(v: string): string | undefined {
  try {
    const u = new URL(v.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'Use http:// or https://';
    return u.username || u.password ? 'No credentials in the URL: use "LLM Profiler: Set API key" for a configured endpoint' : undefined;
  } catch {
    return 'Not a URL';
  }
}

export async function pickChoice(s: PickerServices): Promise<Choice | undefined> {
  type Item = vscode.QuickPickItem & { choice?: Choice; enterUrl?: boolean };
  const items: Item[] = [];
  for (const e of s.config.current.endpoints) {
    const restricted = s.trust.isRestricted(e);
    const last = s.runs.latestForUrl(e.url);
    items.push({
      label: `$(globe) ${e.name}`,
      description: e.url,
      detail: [e.model, e.api === 'auto' ? undefined : e.api, restricted ? 'from an untrusted workspace: asks first, no key' : undefined,
        last?.ttftP50Ms !== undefined ? `last TTFT p50 ${formatMs(last.ttftP50Ms)}` : undefined].filter(Boolean).join(' · ') || undefined,
      choice: { kind: 'configured', entry: e },
    });
  }
  const ls = s.localServer;
  items.push({
    label: '$(server-process) Local server',
    description: ls.handle ? ls.handle.url : 'starts it',
    detail: ls.handle ? `running: ${ls.handle.model}` : `llama.cpp on this machine (${ls.config.modelPath ? ls.config.modelPath : `synthetic ${ls.config.preset}`})`,
    choice: { kind: 'local' },
  });
  items.push({ label: '$(link) Enter a URL…', enterUrl: true });
  const pick = await vscode.window.showQuickPick(items, { title: 'Profile endpoint', placeHolder: 'Which endpoint?', matchOnDescription: true });
  if (!pick) return undefined;
  if (!pick.enterUrl) return pick.choice;
  const url = await vscode.window.showInputBox({
    title: 'Profile endpoint',
    prompt: 'Base URL of an OpenAI-compatible, Ollama or llama.cpp server (no key is sent)',
    placeHolder: 'http://127.0.0.1:8000',
    validateInput: validateUrl,
  });
  return url ? { kind: 'url', url: url.trim() } : undefined;
}

export async function pickPreset(w: WorkloadDefaults): Promise<PresetId | undefined> {
  const q = presetWorkload('quick', w);
  const l = presetWorkload('load', w);
  const s = presetWorkload('sweep', w);
  const c = presetWorkload('cache-check', w);
  const items: (vscode.QuickPickItem & { id: PresetId })[] = [
    { id: 'quick', label: 'Quick check', description: `${q.requests} requests, one at a time, ${q.maxTokens} tokens out` },
    { id: 'load', label: 'Load test', description: `${l.requests} requests, ${l.concurrency} concurrent, ${l.maxTokens} tokens out` },
    { id: 'custom', label: 'Custom…', description: 'choose concurrency and requests' },
    { id: 'sweep', label: 'Sweep', description: `concurrency 1, 2, 4, … ${s.concurrency}, ${s.requests} requests each: throughput against latency, the operating point` },
    { id: 'cache-check', label: 'Prefix cache check', description: `a ${c.promptTokens}-token prompt (or this prompt) cold, again and varied, ${c.requests / 3} rounds: does the server cache prompts?` },
  ];
  const pick = await vscode.window.showQuickPick(items, { title: 'Profile endpoint: workload', placeHolder: 'Which workload?' });
  return pick?.id;
}

export async function askCustom(w: WorkloadDefaults): Promise<PresetInput | undefined> {
  const c = await vscode.window.showInputBox({ title: 'Custom workload (1/2)', prompt: 'Concurrent requests', value: String(w.concurrency), validateInput: (v) => inputProblem('concurrency', v) });
  if (c === undefined) return undefined;
  const r = await vscode.window.showInputBox({ title: 'Custom workload (2/2)', prompt: 'Measured requests', value: String(w.requests), validateInput: (v) => inputProblem('requests', v) });
  if (r === undefined) return undefined;
  return { concurrency: Number(c), requests: Number(r) };
}
