// The words around the code: README.md stays short (what, the two commands, pictures, the main flows,
// links), every relative link of README.md, ARCHITECTURE.md and docs/*.md reaches a file and, with a
// #fragment, a heading there (GitHub's slugs), and docs/providers.md's table is the API table's.
// `UPDATE_DOCS=1` rewrites a generated block that is out of date.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { apiTableMarkdown } from '../../src/engine/core/apis';

const repo = join(__dirname, '../..');
const PAGES = ['README.md', 'ARCHITECTURE.md', ...readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown without its fenced blocks and inline code (neither holds links), lines kept. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, '')).replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor for a heading: its text as rendered, lower-cased, punctuation dropped, spaces to hyphens (github-slugger). */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*/g, '')
    .trim();
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page has: one per heading, a repeated one numbered as GitHub numbers it (-1, -2, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a page (inline links and images), with their line. */
function relativeLinks(text: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  prose(text).split('\n').forEach((l, i) => {
    for (const m of l.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1]!)) out.push({ target: m[1]!, line: i + 1 });
    }
  });
  return out;
}

/** What is wrong with one link of `page`, or undefined when it reaches its file and heading. */
function linkProblem(page: string, target: string): string | undefined {
  const [path = '', fragment] = target.split('#') as [string, string | undefined];
  const file = path === '' ? join(repo, page) : join(repo, dirname(page), decodeURI(path));
  if (!existsSync(file)) return `no file ${relative(repo, file)}`;
  if (fragment === undefined || fragment === '') return undefined;
  if (!file.endsWith('.md') || statSync(file).isDirectory()) return `#${fragment} on a file that is not markdown`;
  return anchors(readFileSync(file, 'utf8')).has(decodeURIComponent(fragment)) ? undefined : `no heading #${fragment} in ${relative(repo, file)}`;
}

test('README.md is at most 250 lines, and keeps the two commands and a link to every page of docs/', () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= 250, `README.md has ${lines} lines: move the detail into docs/`);
  assert.match(readme, /^npm ci && npm run build && npm run profile\b/m);
  assert.match(readme, /^npm test\b/m);
  const linked = new Set(relativeLinks(readme).map((l) => l.target.split('#')[0]));
  for (const f of readdirSync(join(repo, 'docs')).filter((n) => n.endsWith('.md'))) assert.ok(linked.has(`docs/${f}`), `README.md does not link docs/${f}`);
});

test('every relative link of README.md, ARCHITECTURE.md and docs/ reaches its file and heading', () => {
  const problems: string[] = [];
  let count = 0;
  for (const page of PAGES) {
    for (const { target, line } of relativeLinks(readFileSync(join(repo, page), 'utf8'))) {
      count++;
      const problem = linkProblem(page, target);
      if (problem) problems.push(`${page}:${line}: ${target}: ${problem}`);
    }
  }
  assert.ok(count > 40, `only ${count} links found: the parser is broken`);
  assert.deepEqual(problems, []);
});

test('slugs and anchors as GitHub makes them', () => {
  assert.equal(slug("Other tools' results, exports, and many streams"), 'other-tools-results-exports-and-many-streams');
  assert.equal(slug('`llm-profiler serve`'), 'llm-profiler-serve');
  assert.equal(slug('Why the prebuilt binary is slower, measured'), 'why-the-prebuilt-binary-is-slower-measured');
  assert.equal(slug('The run file (`llm-profiler.run`, version 1)'), 'the-run-file-llm-profilerrun-version-1');
  assert.equal(slug('`prompts[]` (`PromptRecord`)'), 'prompts-promptrecord');
  assert.deepEqual([...anchors('# A\n## B\n```\n# not a heading\n```\n## B\n')], ['a', 'b', 'b-1']);
  assert.deepEqual(relativeLinks('[a](x.md#y) [b](https://e.org) `[c](z.md)`\n![i](img.png "t")'), [{ target: 'x.md#y', line: 1 }, { target: 'img.png', line: 2 }]);
  assert.match(linkProblem('README.md', 'docs/metrics.md#no-such-heading') ?? '', /no heading/);
  assert.match(linkProblem('docs/cli.md', 'nope.md') ?? '', /no file docs\/nope\.md/);
});

test('docs/providers.md holds the table of the APIs, generated from src/engine/core/apis.ts', () => {
  const file = join(repo, 'docs/providers.md');
  const page = readFileSync(file, 'utf8');
  const [start, end] = ['<!-- apis:start -->', '<!-- apis:end -->'];
  const a = page.indexOf(start);
  const b = page.indexOf(end);
  assert.ok(a >= 0 && b > a, `docs/providers.md must hold ${start} then ${end}`);
  const want = `\n${apiTableMarkdown()}`;
  const have = page.slice(a + start.length, b);
  if (process.env.UPDATE_DOCS === '1' && have !== want) writeFileSync(file, `${page.slice(0, a + start.length)}${want}${page.slice(b)}`);
  else assert.equal(have, want, 'docs/providers.md is out of date: run UPDATE_DOCS=1 node --import tsx --test test/unit/docs.test.ts');
});
