// Keeping a request out of the server's prefix cache ("cold", the workload's `prefixCache`), per API.
// llama.cpp's native /completion takes `cache_prompt: false` (its row's `cold` in core/apis.ts). Everywhere else a short unique nonce
// leads the first message: a prefix cache, longest-common-prefix (llama.cpp, Ollama) or block-hashed
// (vLLM, SGLang), can then reuse nothing past a chat template's first tokens. Body fields such as
// vLLM's `cache_salt` would do it without touching the prompt, but hosted OpenAI-compatible APIs
// refuse unknown fields with a 400, and the server behind a URL cannot be known for sure.
// Pure, as the adapters are: the runner makes the nonce (unique per request) and records the way.
import { apiFacts } from '../../core/apis';
import type { CacheBust, ChatMessage, Prompt, RequestSpec } from '../../core/types';
import type { ApiKind } from '../../core/apis';

/** A short random base-36 tag from `bytes` random bytes: what makes a nonce unique to a run or a check. */
export function randomTag(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += (b % 36).toString(36);
  return s;
}

/** The prompt with `lead` before its first message's content (and before its first part, when it has parts: its images and name kept). */
export function withLead(prompt: Prompt, lead: string): Prompt {
  if (prompt.messages.length === 0) return prompt;
  const [first, ...rest] = prompt.messages as [ChatMessage, ...ChatMessage[]];
  const parts = first.parts;
  const led: ChatMessage = {
    ...first,
    content: lead + first.content,
    ...(parts
      ? { parts: parts[0]?.type === 'text' ? [{ type: 'text', text: lead + parts[0].text }, ...parts.slice(1)] : [{ type: 'text', text: lead }, ...parts] }
      : {}),
  };
  return { ...prompt, messages: [led, ...rest] };
}

/** How a cold request is kept cold on an API (its row's `cold`): a nonce unless the API has its own way. */
export function cacheBustFor(api: ApiKind): CacheBust {
  return apiFacts(api)?.cold ?? 'nonce';
}

/** The text put before the first message's content: a few tokens, e.g. "[482917-000042] " (plan.ts). */
export function nonceLead(nonce: string): string {
  return `[${nonce}] `;
}

/** The prompt as the request sends it: with the nonce leading its first message when the spec asks for one. */
export function sentPrompt(spec: RequestSpec): Prompt {
  if (spec.cacheBust !== 'nonce' || !spec.nonce) return spec.prompt;
  return withLead(spec.prompt, nonceLead(spec.nonce));
}
