// The import entry point over real files: the format told from the content, and each refusal's
// message (naming the file and what is wrong), with nothing written; the CLI's `import` over it.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { importCommand } from '../../src/cli/importCommand';
import { IMPORT_MAX_BYTES, importBenchmarkFile } from '../../src/engine/files/importers/index';
import { ImportError } from '../../src/engine/files/importers/common';
import { readRunFile } from '../../src/engine/files/runFile';
import { IMPORT_TOOL_NAMES, IMPORT_TOOL_ROWS, type ImportTool } from '../../src/engine/core/types';
import { importToolLabel } from '../../src/present/toolLabels';
import { MAIN_USAGE, usage } from '../../src/cli/usage';
import { DROP_HINT } from '../../webview/report/drop';

const FIXTURES = join(__dirname, '../fixtures/vllm');
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'import-index-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** importBenchmarkFile(path) refuses with exactly `message` (after "path: "), and writes nothing beside it. */
async function refuses(path: string, message: string | RegExp): Promise<void> {
  const before = readdirSync(dir).sort();
  await assert.rejects(importBenchmarkFile(path), (e: unknown) => {
    assert.ok(e instanceof ImportError, String(e));
    assert.ok(e.message.startsWith(`${path}: `), e.message);
    const problem = e.message.slice(path.length + 2);
    if (typeof message === 'string') assert.equal(problem, message);
    else assert.match(problem, message);
    return true;
  });
  assert.deepEqual(readdirSync(dir).sort(), before, 'nothing is written');
}

describe('importBenchmarkFile: the format from the content', () => {
  it('a vLLM result under any name (here .txt) is read as one', async () => {
    const p = join(dir, 'result.txt');
    copyFileSync(join(FIXTURES, 'rate4.json'), p);
    const run = await importBenchmarkFile(p, { percentiles: [50, 99] });
    assert.equal(run.importedFrom?.tool, 'vllm');
    assert.equal(run.importedFrom?.file, p);
    assert.equal(run.requests.length, 24);
    assert.deepEqual(Object.keys(run.summary.ttftMs).filter((k) => k.startsWith('p')), ['p50', 'p99']);
  });

  it('vLLM results appended one per line (--append-result) are one sweep', async () => {
    const lines = ['burst', 'concurrency2'].map((n) => JSON.stringify(JSON.parse(readFileSync(join(FIXTURES, `${n}.json`), 'utf8')))).join('\n');
    const run = await importBenchmarkFile(file('appended.json', `${lines}\n`));
    assert.equal(run.sweep?.points.length, 2);
    assert.equal(run.requests.length, 48);
  });
});

describe('importBenchmarkFile: what is refused, and why', () => {
  it('a missing file, a folder', async () => {
    await refuses(join(dir, 'nope.json'), 'no such file');
    mkdirSync(join(dir, 'sub'));
    await refuses(join(dir, 'sub'), 'this is a folder, not a file: give the result file itself (a .json, .yaml or .jsonl)');
    rmSync(join(dir, 'sub'), { recursive: true });
  });

  it('a file larger than the limit is refused before it is read (a 2 GB sparse file)', async () => {
    const p = file('huge.json', '');
    truncateSync(p, 2 * 2 ** 30); // as `truncate -s 2G`: sparse, nothing on disk
    try {
      await refuses(p, 'the file is 2.0 GB, more than the 512 MB an import may be');
    } finally {
      rmSync(p);
    }
    assert.equal(IMPORT_MAX_BYTES, 512 * 2 ** 20);
  });

  it('an empty file, blanks only', async () => {
    await refuses(file('empty.json', ''), 'the file is empty');
    await refuses(file('blank.json', ' \n\n'), 'the file is empty');
  });

  it('JSON cut off in the middle', async () => {
    const text = readFileSync(join(FIXTURES, 'burst.json'), 'utf8');
    await refuses(file('cut.json', text.slice(0, Math.floor(text.length / 2))), 'the file is truncated (it ends in the middle of the JSON): was it still being written, or cut short when copied?');
  });

  it('broken JSON that is not cut off', async () => {
    await refuses(file('broken.json', '{"a": 1,, "b": 2}'), /^not valid JSON \(/);
  });

  it('neither JSON nor YAML; plain text', async () => {
    await refuses(file('bin.dat', Buffer.from([0x22, 0x61, 0x0a, 0x09, 0x3a, 0x5d, 0x7b])), /^neither JSON nor YAML \(as JSON: .*; as YAML: /);
    await refuses(file('notes.txt', 'just some words\n'), 'neither JSON nor YAML of a result: it reads as plain text ("just some words")');
  });

  it('JSON (or YAML, or JSON lines) of no tool known', async () => {
    await refuses(file('other.json', '{"hello": 1, "world": [2]}'), 'not a vLLM, GuideLLM or AIPerf result: an object with keys "hello", "world"');
    await refuses(file('list.json', '[1, 2, 3]'), 'not a vLLM, GuideLLM or AIPerf result: a list of 3 items');
    await refuses(file('other.yaml', 'hello: 1\nworld: [2]\n'), 'not a vLLM, GuideLLM or AIPerf result: an object with keys "hello", "world"');
    await refuses(file('other.jsonl', '{"a": 1}\n{"b": 2}\n'), 'not a vLLM, GuideLLM or AIPerf result: JSON lines whose first line is an object with keys "a"');
  });

  it('a vLLM result saved without --save-detailed: re-run with it', async () => {
    const p = join(dir, 'summary.json');
    copyFileSync(join(FIXTURES, 'summary-only.json'), p);
    await refuses(p, /no per-request data .*saved without --save-detailed\. Re-run `vllm bench serve` \(or benchmark_serving\.py\) with --save-result --save-detailed$/);
    rmSync(p);
  });

  it('a vLLM result of a shape not known names what it found and the shapes known', async () => {
    const doc = JSON.parse(readFileSync(join(FIXTURES, 'burst.json'), 'utf8')) as Record<string, unknown>;
    doc.ttfts = 'fast';
    await refuses(file('odd.json', JSON.stringify(doc)), /^a vLLM result of a shape not known: "ttfts" is string, not a list \(known: `vllm bench serve --save-result --save-detailed`/);
  });
});

/** importCommand with its own streams. */
async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (b: Buffer) => (stdout += b.toString()));
  err.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await importCommand(args, { stdout: out, stderr: err, env: {}, cwd: dir });
  return { code, stdout, stderr };
}

describe('llm-profiler import (in process)', () => {
  it('prints the table under where it came from; --out writes a run file the reader accepts; importing that run file again is refused', async () => {
    copyFileSync(join(FIXTURES, 'concurrency2.json'), join(dir, 'c2.json'));
    const r = await cli(['c2.json', '--out', 'c2.run.json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Imported from vLLM: c2\.json\n/);
    assert.match(r.stdout, /Workload: +closed loop, concurrency 2/);
    assert.match(r.stdout, /^ {2}TTFT mean +213\.07 {3}mean_ttft_ms 213\.07$/m);
    assert.match(r.stdout, /^ {2}ITL p99 +138\.16 {3}p99_itl_ms 138\.16$/m);
    const run = await readRunFile(join(dir, 'c2.run.json'));
    assert.equal(run.importedFrom?.tool, 'vllm');
    assert.equal(run.importedFrom?.file, 'c2.json');
    assert.equal(run.requests.length, 24);
    const again = await cli(['c2.run.json']);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, 'llm-profiler: c2.run.json: this is already an llm-profiler run file: open it directly (llm-profiler opens run files as they are; there is nothing to import)\n');
    rmSync(join(dir, 'c2.run.json'));
    rmSync(join(dir, 'c2.json'));
  });

  it('a bad file: exit 1, its message, and --out not written', async () => {
    file('bad.json', '{"hello": 1}');
    const r = await cli(['bad.json', '--out', 'bad.run.json']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'llm-profiler: bad.json: not a vLLM, GuideLLM or AIPerf result: an object with keys "hello"\n');
    assert.equal(r.stdout, '');
    assert.ok(!readdirSync(dir).includes('bad.run.json'));
    rmSync(join(dir, 'bad.json'));
  });

  it('several files with --out-dir: one run file each; --out with several is a usage error; no file is a usage error', async () => {
    for (const n of ['burst', 'rate4']) copyFileSync(join(FIXTURES, `${n}.json`), join(dir, `${n}.json`));
    mkdirSync(join(dir, 'runs'));
    const r = await cli(['burst.json', 'rate4.json', '--out-dir', 'runs', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(join(dir, 'runs')).sort(), ['burst.run.json', 'rate4.run.json']);
    const shown = JSON.parse(r.stdout) as { importedFrom: { file: string } }[];
    assert.deepEqual(shown.map((s) => s.importedFrom.file), ['burst.json', 'rate4.json']);
    const both = await cli(['burst.json', 'rate4.json', '--out', 'x.json']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--out takes one file's run; 2 files were given: use --out-dir DIR/);
    const none = await cli([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /import: give the file to import/);
    const unknown = await cli(['burst.json', '--concurrency', '4']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown flag --concurrency/);
    rmSync(join(dir, 'runs'), { recursive: true });
    for (const n of ['burst', 'rate4']) rmSync(join(dir, `${n}.json`));
  });
});

describe('the one list of importable tools (IMPORT_TOOL_ROWS) names them everywhere', () => {
  /** A result of each tool, from the fixtures its makers' code wrote. */
  const SAMPLES: Readonly<Record<ImportTool, string>> = {
    vllm: join(FIXTURES, 'burst.json'),
    guidellm: join(__dirname, '../fixtures/guidellm/concurrent-v1.yaml'),
    aiperf: join(__dirname, '../fixtures/aiperf/run-2026/profile_export.jsonl'),
  };

  it('each row has an importer that reads a file of its own extensions', async () => {
    for (const t of IMPORT_TOOL_ROWS) {
      const path = SAMPLES[t.id];
      assert.ok((t.extensions as readonly string[]).includes(path.split('.').pop()!), `${t.id}: ${path}`);
      const run = await importBenchmarkFile(path);
      assert.equal(run.importedFrom?.tool, t.id);
      assert.equal(importToolLabel(t.id), t.label);
    }
  });

  it("the refusal, the CLI's help and the report's drop hint name every tool from the list", () => {
    assert.equal(IMPORT_TOOL_NAMES, 'vLLM, GuideLLM or AIPerf');
    for (const t of IMPORT_TOOL_ROWS) {
      assert.ok(usage('import').includes(`${t.label}'s`), `import's help names ${t.label}`);
      assert.ok(MAIN_USAGE.includes(t.label), `the main help names ${t.label}`);
    }
    assert.equal(DROP_HINT, 'Drop a vLLM, GuideLLM or AIPerf result here (hold Shift) to open it.');
  });

  it("the manifest's menus offer the command on exactly the tools' extensions", () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { contributes: { menus: Record<string, { command: string; when?: string }[]> } };
    const whens = Object.values(manifest.contributes.menus).flat().filter((m) => m.command === 'llmProfiler.openBenchmarkResult' && m.when?.includes('resourceExtname'));
    assert.ok(whens.length >= 2, 'the Explorer and the editor title offer it');
    const extensions = new Set(IMPORT_TOOL_ROWS.flatMap((t) => t.extensions));
    for (const m of whens) {
      const re = /resourceExtname =~ \/(.+)\/(\w*)/.exec(m.when!);
      assert.ok(re, m.when);
      const accepts = new RegExp(re[1]!, re[2]);
      for (const ext of extensions) assert.ok(accepts.test(`.${ext}`), `${m.when} offers .${ext}`);
      for (const ext of ['txt', 'csv', 'md', 'prompt']) assert.ok(!accepts.test(`.${ext}`), `${m.when} does not offer .${ext}`);
    }
  });
});
