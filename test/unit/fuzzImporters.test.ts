// Property-based fuzzing of the importers (issue 27): the real results in test/fixtures (vLLM,
// GuideLLM, AIPerf) mutated (a number made 1e308, -1, Infinity or 5e-324, a "NaN" string, a field
// deleted or of another type, a list made huge or short, a JSON number token made 1e999 or NaN) and
// imported through the one entry point. Whatever the file, the importer either returns a run that
// the run-file reader accepts (written and read back) or refuses with its own ImportError, never the
// last line of defence's refusal (the range checks must catch it first), never a RangeError, a
// TypeError or a stack trace, and within a bounded time. Each property runs a fixed number of cases
// from a fixed seed (the file stays within ~15 s); a failure names the seed and the mutations.
// To explore: FUZZ_SEED=<n> FUZZ_SCALE=<multiplier> node --import tsx --test test/unit/fuzzImporters.test.ts
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as fc from 'fast-check';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { UNWRITABLE, ImportError } from '../../src/engine/files/importers/common';
import { importBenchmarkFile } from '../../src/engine/files/importers/index';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';

const SEED = process.env.FUZZ_SEED === undefined ? 0x1f027 : Number(process.env.FUZZ_SEED);
const SCALE = process.env.FUZZ_SCALE === undefined ? 1 : Number(process.env.FUZZ_SCALE);
/** One import of a fixture's size takes a few ms; a mutated one (a list of 100 000) well under a second. */
const CASE_MS = 3000;
/** The most a 'huge' mutation adds to a file. */
const HUGE_BYTES = 2_000_000;
/** A property's time limit: its cases take a few seconds in all (more when FUZZ_SCALE asks for more). */
const PROPERTY_MS = 60_000 * Math.max(1, SCALE);

const FIXTURES = join(__dirname, '../fixtures');
const read = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'fuzz-importers-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

// ---- the documents and the places in them -----------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = readonly (string | number)[];

/** Every place in a document (the root excluded), and the places that hold a number. */
function placesOf(doc: Json): { all: Path[]; numbers: Path[] } {
  const all: Path[] = [];
  const numbers: Path[] = [];
  const walk = (v: Json, path: Path) => {
    if (path.length > 0) all.push(path);
    if (typeof v === 'number') numbers.push(path);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(doc, []);
  return { all, numbers };
}

/** A fixture: its documents (one, or AIPerf's lines, or vLLM's results one per line) and how they are written. */
interface Fixture {
  readonly name: string;
  readonly docs: readonly Json[];
  readonly write: (docs: readonly Json[]) => string;
  /** AIPerf's aggregate, written beside the records (mutated too). */
  readonly aggregate?: Json;
  readonly places: readonly { all: Path[]; numbers: Path[] }[];
}

function fixture(name: string, docs: readonly Json[], write: Fixture['write'], aggregate?: Json): Fixture {
  return { name, docs, write, ...(aggregate !== undefined ? { aggregate } : {}), places: [...docs, ...(aggregate !== undefined ? [aggregate] : [])].map(placesOf) };
}

const jsonLines = (docs: readonly Json[]) => `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`;
const oneJson = (docs: readonly Json[]) => JSON.stringify(docs[0]);
const aiperf = (run: string) =>
  fixture(`aiperf ${run}`, read(`aiperf/${run}/profile_export.jsonl`).trim().split('\n').map((l) => JSON.parse(l) as Json), jsonLines, JSON.parse(read(`aiperf/${run}/profile_export_aiperf.json`)) as Json);

const VLLM = [
  ...['burst', 'concurrency2', 'rate4'].map((n) => fixture(`vllm ${n}`, [JSON.parse(read(`vllm/${n}.json`)) as Json], oneJson)),
  fixture('vllm appended', ['burst', 'rate4'].map((n) => JSON.parse(read(`vllm/${n}.json`)) as Json), jsonLines),
];
const GUIDELLM = [
  fixture('guidellm sweep-v1', [JSON.parse(read('guidellm/sweep-v1.json')) as Json], oneJson),
  fixture('guidellm sweep-0.2', [JSON.parse(read('guidellm/sweep-0.2.json')) as Json], oneJson),
  fixture('guidellm concurrent-v1.yaml', [parseYaml(read('guidellm/concurrent-v1.yaml')) as Json], (docs) => stringifyYaml(docs[0])),
];
const AIPERF = [aiperf('run-2026'), aiperf('run-2025-10')];

// ---- mutations ----------------------------------------------------------------------------------

/** What is put in a place's stead: numbers no run can have, the strings some tools write for them, other types. */
const REPLACEMENTS: readonly Json[] = [
  1e308, -1e308, 1e300, -1, -0.5, 0, 5e-324, 1e-7, 0.5, 2 ** 53 + 2, 1e15, 86400 * 365 * 2, 253402300800, 1e20,
  // the edges of the ranges: a year in s, the largest count and concurrency, the smallest rate
  31536000, 1e9, 1e7, 1e-6,
  'NaN', 'Infinity', '-Infinity', 'inf', '1e308', '-1', '', 'x'.repeat(5000), null, true, false, {}, [], [1e308], { value: -1, unit: 'ms' },
];

type Kind = 'replace' | 'replace-number' | 'every-number' | 'delete' | 'huge' | 'halve' | 'wrap';

interface Mutation {
  readonly kind: Kind;
  /** Which document (modulo their count) and which place in it (modulo the places). */
  readonly doc: number;
  readonly place: number;
  readonly with: number;
  readonly size: number;
}

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom<Kind>('replace', 'replace-number', 'replace-number', 'replace-number', 'every-number', 'delete', 'huge', 'halve', 'wrap'),
  doc: fc.nat(),
  place: fc.nat(),
  with: fc.nat({ max: REPLACEMENTS.length - 1 }),
  size: fc.constantFrom(2, 1000, 100_000),
});

/** The parent of a place and its key there, when the place still exists (an earlier mutation may have removed it). */
function locate(root: Json, path: Path): { parent: Json[] | Record<string, Json>; key: string | number } | undefined {
  let v: Json = root;
  for (const k of path.slice(0, -1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, Json>)[k as never] as Json;
  }
  const key = path[path.length - 1]!;
  if (v === null || typeof v !== 'object' || !(key in v)) return undefined;
  return { parent: v as Json[] | Record<string, Json>, key };
}

/** Applies one mutation to `docs` (already copies); returns its description for a failure's message. */
function mutate(docs: Json[], places: readonly { all: Path[]; numbers: Path[] }[], m: Mutation): string {
  const d = m.doc % docs.length;
  const list = m.kind === 'replace-number' || m.kind === 'every-number' ? places[d]!.numbers : places[d]!.all;
  if (list.length === 0) return 'nothing';
  const path = list[m.place % list.length]!;
  const at = locate(docs[d]!, path);
  if (!at) return `${path.join('.')}: gone`;
  const { parent, key } = at;
  const get = () => (parent as Record<string | number, Json>)[key]!;
  const set = (v: Json) => ((parent as Record<string | number, Json>)[key] = v);
  const what = REPLACEMENTS[m.with]!;
  switch (m.kind) {
    case 'replace':
    case 'replace-number':
      set(structuredClone(what));
      break;
    case 'every-number':
      // the same field in every sibling (every request's ttft, every line's start): the lists stay consistent
      if (Array.isArray(parent)) parent.forEach((_, i) => typeof parent[i] === 'number' && (parent[i] = structuredClone(what)));
      else set(structuredClone(what));
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      break;
    case 'huge': {
      // a list of 100 000 numbers, but not of 100 000 requests: the file stays within a few MB
      const v = get();
      const copies = Math.min(m.size, Math.max(2, Math.floor(HUGE_BYTES / (JSON.stringify(v)?.length ?? 1))));
      set(Array.from({ length: copies }, () => structuredClone(v)));
      break;
    }
    case 'halve': {
      const v = get();
      if (Array.isArray(v)) v.length = Math.floor(v.length / 2);
      else if (typeof v === 'string') set(v.slice(0, Math.floor(v.length / 2)));
      break;
    }
    case 'wrap':
      set([get()]);
      break;
  }
  return `doc ${d} ${path.join('.')}: ${m.kind}${m.kind.startsWith('replace') || m.kind === 'every-number' ? ` ${JSON.stringify(what)?.slice(0, 40)}` : m.kind === 'huge' ? ` ×${m.size}` : ''}`;
}

// ---- the property -------------------------------------------------------------------------------

let cases = 0;

/** Writes the fixture's (mutated) files into a folder of their own and imports them; returns what was written where. */
async function importWritten(f: Fixture, docs: readonly Json[], aggregate: Json | undefined, text?: string): Promise<void> {
  const folder = join(dir, String(cases++));
  mkdirSync(folder);
  const path = join(folder, f.name.startsWith('aiperf') ? 'profile_export.jsonl' : f.name.endsWith('.yaml') ? 'benchmarks.yaml' : 'result.json');
  writeFileSync(path, text ?? f.write(docs));
  if (aggregate !== undefined) writeFileSync(join(folder, 'profile_export_aiperf.json'), JSON.stringify(aggregate));
  try {
    await holds(path);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The importer's promise: a run the reader accepts, or its own clear refusal; in bounded time. */
async function holds(path: string): Promise<void> {
  const t0 = performance.now();
  try {
    const run = await importBenchmarkFile(path);
    assert.ok(run.requests.length > 0, 'an imported run has requests');
    // what the CLI writes with --out and the extension stores: it must read back
    const back = parseRunFile(serializeRunFile(run), path);
    assert.equal(back.requests.length, run.requests.length);
  } catch (e) {
    assert.ok(e instanceof ImportError, `the importer's own error, not ${(e as Error).stack ?? String(e)}`);
    assert.ok(!e.message.includes(UNWRITABLE), `a range check refuses it, not the last line of defence: ${e.message}`);
    assert.ok(!/\n\s+at /.test(e.message), `no stack trace in the message: ${e.message}`);
    assert.ok(e.message.startsWith(`${path}: `), `the message names the file: ${e.message}`);
  }
  const ms = performance.now() - t0;
  assert.ok(ms < CASE_MS, `imported or refused in ${Math.round(ms)} ms`);
}

function property(fixtures: readonly Fixture[], numRuns: number): Promise<void> {
  return fc.assert(
    fc.asyncProperty(fc.nat({ max: fixtures.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: 4 }), async (which, mutations) => {
      const f = fixtures[which]!;
      const all = structuredClone([...f.docs, ...(f.aggregate !== undefined ? [f.aggregate] : [])]) as Json[];
      const done = mutations.map((m) => mutate(all, f.places, m));
      const aggregate = f.aggregate !== undefined ? all.pop() : undefined;
      try {
        await importWritten(f, all, aggregate);
      } catch (e) {
        throw new Error(`${f.name} with ${done.join('; ')}: ${(e as Error).message}`, { cause: e });
      }
    }),
    { seed: SEED, numRuns: Math.max(1, Math.round(numRuns * SCALE)), includeErrorInReport: true },
  );
}

describe('the importers over mutated real results', () => {
  it('vLLM (one result, and results one per line)', { timeout: PROPERTY_MS }, () => property(VLLM, 120));
  it('GuideLLM (schema 1 as JSON and YAML, 0.2)', { timeout: PROPERTY_MS }, () => property(GUIDELLM, 120));
  it("AIPerf (the records, and the aggregate beside them)", { timeout: PROPERTY_MS }, () => property(AIPERF, 120));

  it('number tokens of the JSON text made 1e999 (Infinity to JSON.parse), -1e999, NaN, or the text cut short', { timeout: PROPERTY_MS }, async () => {
    const texts = [...VLLM, ...GUIDELLM.slice(0, 2), ...AIPERF];
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: texts.length - 1 }),
        fc.array(fc.record({ token: fc.nat(), with: fc.constantFrom('1e999', '-1e999', 'NaN', 'Infinity', '1e308', '-1', '4e-400') }), { minLength: 1, maxLength: 3 }),
        fc.option(fc.nat(), { nil: undefined }),
        async (which, swaps, cut) => {
          const f = texts[which]!;
          let text = f.write(f.docs);
          const tokens = [...text.matchAll(/(?<=[:[,]\s*)-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g)];
          for (const s of swaps) {
            const m = tokens[s.token % tokens.length]!;
            text = text.slice(0, m.index) + s.with.padEnd(m[0].length, ' ') + text.slice(m.index! + Math.max(m[0].length, s.with.length));
          }
          if (cut !== undefined) text = text.slice(0, cut % text.length);
          try {
            await importWritten(f, f.docs, f.aggregate, text);
          } catch (e) {
            throw new Error(`${f.name} with ${swaps.map((s) => s.with).join(', ')}${cut !== undefined ? ` cut at ${cut % text.length}` : ''}: ${(e as Error).message}`, { cause: e });
          }
        },
      ),
      { seed: SEED, numRuns: Math.max(1, Math.round(120 * SCALE)), includeErrorInReport: true },
    );
  });
});
