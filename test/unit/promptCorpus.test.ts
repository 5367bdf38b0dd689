// Real prompt files from public repositories (test/fixtures/promptCorpus, each with its repository,
// path, commit and licence in SOURCES.json), read by the profiler and compared with what the file's
// own tool sends: expected.json holds the reference oracle's output (oracle.py: Prompty's Python
// runtimes with the real Jinja2, gh-models' `run --file`), made by `node scripts/promptCorpusExpected.mjs`
// as runs.json says (which runtime the file was written for, the values and environment it needs).
// Roles, names, text (ends trimmed: the runtimes disagree on trailing newlines) and sampling settings
// must agree; a file its tool refuses must be refused, unless runs.json names the deviation and why.
// When python3 with jinja2 and PyYAML is here, the oracle is run again to prove expected.json current.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import type { ChatMessage, Prompt } from '../../src/engine/core/types';
import { parserFileName } from '../../src/extension/promptFileKinds';

const corpus = join(__dirname, '../fixtures/promptCorpus');
interface Run {
  readonly file: string;
  readonly runtime: 'v1' | 'v2' | 'promptflow' | 'gh' | 'none';
  readonly env?: Record<string, string>;
  readonly vars?: Record<string, unknown>;
  /** Where the profiler knowingly differs from the runtime, and why; `profiler` says what it does instead. */
  readonly deviation?: string;
  readonly profiler?: 'refuses' | 'sends';
}
interface Oracle {
  readonly messages?: { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[]; name?: string }[];
  readonly params?: Record<string, unknown>;
  readonly error?: string;
}
const runs = JSON.parse(readFileSync(join(corpus, 'runs.json'), 'utf8')) as Run[];
const expected = JSON.parse(readFileSync(join(corpus, 'expected.json'), 'utf8')) as Record<string, Oracle>;
const sources = JSON.parse(readFileSync(join(corpus, 'SOURCES.json'), 'utf8')) as { file: string; repo: string; commit: string; license: string }[];

function read(run: Run) {
  const path = join(corpus, run.file);
  const dir = dirname(path);
  return parsePromptFile(parserFileName(path), readFileSync(path, 'utf8'), {
    env: run.env ?? {},
    ...(run.vars ? { vars: run.vars } : {}),
    readFile: (rel) => (existsSync(join(dir, rel)) ? readFileSync(join(dir, rel)) : undefined),
  });
}

/** A message as the oracle writes it: OpenAI's wire shape, text ends trimmed. */
function wire(m: ChatMessage) {
  const content = m.parts
    ? m.parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text.trim() } : { type: 'image_url', image_url: { url: p.url } }))
    : m.content.trim();
  return { role: m.role, content, ...(m.name !== undefined ? { name: m.name } : {}) };
}

function theirs(o: Oracle) {
  return (o.messages ?? []).map((m) => ({
    // Prompty v2 sends `developer` as written; the profiler sends it as system (docs/prompt-files.md)
    role: m.role === 'developer' ? 'system' : m.role,
    content: typeof m.content === 'string' ? m.content.trim() : m.content.map((p) => (p.type === 'text' ? { type: 'text', text: p.text!.trim() } : p)),
    ...(m.name !== undefined ? { name: m.name } : {}),
  }));
}

/** The oracle's request parameters, in the profiler's names. */
function params(o: Oracle): Record<string, unknown> {
  const p = o.params ?? {};
  const out: Record<string, unknown> = {};
  const pick = (from: string[], to: keyof Prompt) => {
    for (const k of from) if (p[k] !== undefined && p[k] !== null) return void (out[to] = k === 'stop' && typeof p[k] === 'string' ? [p[k]] : p[k]);
  };
  pick(['max_tokens', 'max_completion_tokens'], 'maxTokens');
  pick(['temperature'], 'temperature');
  pick(['top_p'], 'topP');
  pick(['stop'], 'stop');
  pick(['frequency_penalty'], 'frequencyPenalty');
  pick(['presence_penalty'], 'presencePenalty');
  pick(['response_format'], 'responseFormat');
  return out;
}

function mine(p: Prompt): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['maxTokens', 'temperature', 'topP', 'stop', 'frequencyPenalty', 'presencePenalty', 'responseFormat'] as const) if (p[k] !== undefined) out[k] = p[k];
  return out;
}

test('the corpus: every prompt file has its source, commit and licence, and a run', () => {
  const prompts = sources.filter((s) => /\.(prompty|ya?ml|prompt\.md)$/i.test(s.file));
  assert.ok(prompts.length >= 30, `${prompts.length} prompt files`);
  for (const s of sources) {
    assert.match(s.commit, /^[0-9a-f]{40}$/, s.file);
    assert.ok(['MIT', 'Apache-2.0'].includes(s.license), `${s.file}: ${s.license}`);
    assert.ok(existsSync(join(corpus, s.file)), s.file);
  }
  for (const s of prompts) assert.ok(runs.some((r) => r.file === s.file), `${s.file} has a run in runs.json`);
});

/** A runtime's stray marker message (see the multimodal deviation): not text anyone wrote. */
const MARKER_ONLY = /^__PROMPTY_THREAD_[0-9a-f]{8}_\w+__$/;

for (const run of runs.filter((r) => r.runtime !== 'none')) {
  test(`${run.runtime === 'gh' ? 'GitHub Models' : `Prompty (${run.runtime})`}: ${run.file}`, () => {
    const got = read(run);
    const want = expected[run.file]!;
    if (run.deviation !== undefined) {
      assert.ok(run.profiler, 'a deviation says what the profiler does instead');
      assert.equal(got.refusal !== undefined, run.profiler === 'refuses', JSON.stringify(got.refusal));
      if (run.profiler === 'refuses' || want.error !== undefined) return;
      const kept = theirs(want).filter((m) => typeof m.content !== 'string' || !MARKER_ONLY.test(m.content));
      assert.deepEqual(got.prompts[0]!.prompt.messages.map(wire), kept);
      return;
    }
    if (want.error !== undefined) {
      assert.ok(got.refusal, `its tool refuses it (${want.error}); the profiler must too`);
      return;
    }
    assert.equal(got.refusal, undefined, JSON.stringify(got.refusal));
    // one prompt (a .prompt.yml with testData gives one per row: these files have none)
    assert.equal(got.prompts.length, 1);
    const prompt = got.prompts[0]!.prompt;
    // (`gh models run` moves the last system message first: these files have it first already)
    assert.deepEqual(prompt.messages.map(wire), theirs(want));
    assert.deepEqual(mine(prompt), params(want));
  });
}

for (const run of runs.filter((r) => r.runtime === 'none')) {
  test(`as written: ${run.file}`, () => {
    const text = readFileSync(join(corpus, run.file), 'utf8');
    const got = read(run);
    assert.equal(got.refusal, undefined, JSON.stringify(got.refusal));
    if (!/\.prompt\.md$/.test(run.file)) return;
    // VS Code sends the body after the front matter; with no values, every variable stays as written and is listed
    const body = text.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, '').trim();
    assert.deepEqual(got.prompts[0]!.prompt.messages, [{ role: 'user', content: body }]);
    const written = [...body.matchAll(/\$\{(input:[^}:]+|selection|selectedText|file|fileBasename|fileDirname|fileBasenameNoExtension|workspaceFolder|workspaceFolderBasename)(?::[^}]*)?\}/g)].map((m) => m[1]!.replace(/^input:/, ''));
    assert.deepEqual(got.variables.map((v) => v.name).sort(), [...new Set(written)].sort());
    assert.ok(got.variables.every((v) => !v.filled && v.sentAs === 'as written'));
  });
}

const python = (() => {
  try {
    execFileSync('python3', ['-c', 'import jinja2, yaml'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

test('expected.json is what the oracle says today', { skip: python ? false : 'python3 with jinja2 and PyYAML is not installed' }, async () => {
  const { oracle } = (await import('../../scripts/promptCorpusExpected.mjs')) as { oracle: (run: Run) => Oracle };
  for (const run of runs.filter((r) => r.runtime !== 'none')) {
    const now = oracle(run);
    // Prompty v2's nonce markers are random per run: compare with them masked
    const mask = (o: Oracle) => JSON.stringify(o).replace(/__PROMPTY_THREAD_[0-9a-f]{8}_/g, '__PROMPTY_THREAD_');
    assert.equal(mask(now), mask(expected[run.file]!), run.file);
  }
});
