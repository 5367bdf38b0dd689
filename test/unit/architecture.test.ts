// ARCHITECTURE.md against the code, so it cannot drift: its import diagram against the lint's zones
// (eslint.config.mjs, evaluated as import-x's no-restricted-paths evaluates them) and against
// ENGINE_ROOMS (engineRooms.mjs); its table of folders against the folders on disk; every path it
// names in backticks against the files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
// @ts-expect-error: the config is JavaScript, without types
import { ENGINE_ROOMS as ROOMS } from '../../engineRooms.mjs';

const ENGINE_ROOMS = ROOMS as Record<string, readonly string[]>;
const repo = join(__dirname, '../..');
const page = readFileSync(join(repo, 'ARCHITECTURE.md'), 'utf8');

/** One line of the import diagram: a folder (or an engine room, indented) and what it may import. */
interface ImportLine {
  readonly from: string;
  readonly room: boolean;
  readonly to: readonly string[];
}

/** The diagram between `<!-- imports:start -->` and `<!-- imports:end -->`: `A ──► B C (remark)`. */
function parseImports(text: string): ImportLine[] {
  const a = text.indexOf('<!-- imports:start -->');
  const b = text.indexOf('<!-- imports:end -->');
  assert.ok(a >= 0 && b > a, 'ARCHITECTURE.md has no <!-- imports:start --> … <!-- imports:end --> block');
  return text
    .slice(a, b)
    .split('\n')
    .filter((l) => l.includes('──►'))
    .map((l) => {
      const [left = '', right = ''] = l.split('──►');
      const to = right.replace(/\([^)]*\)/g, ' ').split(/\s+/).filter(Boolean).map((t) => t.replace(/\/$/, ''));
      return { from: left.trim().replace(/\/$/, ''), room: /^\s/.test(left), to };
    });
}

// ---- the lint's zones, evaluated ----------------------------------------------------------------

type Zone = { target: string | string[]; from: string | string[]; except?: string[] };
const importX = createRequire(require.resolve('eslint-plugin-import-x'));
const { Minimatch, braceExpand } = importX('minimatch') as {
  Minimatch: new (p: string, o?: object) => { match: (f: string) => boolean };
  braceExpand: (p: string) => string[];
};
const isGlob = importX('is-glob') as (p: string) => boolean;

const contains = (file: string, dir: string): boolean => {
  const r = relative(dir, file);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};
const matches = (file: string, pattern: string): boolean => (isGlob(pattern) ? new Minimatch(pattern, { windowsPathsNoEscape: true }).match(file) : contains(file, pattern));

/** Whether the lint refuses an import of `to` in `from` (repository-relative files), as no-restricted-paths decides. */
function refused(zones: readonly Zone[], from: string, to: string): boolean {
  const f = resolve(repo, from);
  const t = resolve(repo, to);
  return zones.some((z) => {
    if (![z.target].flat().some((p) => matches(f, resolve(repo, p)))) return false;
    const froms = [z.from].flat().map((p) => resolve(repo, p));
    if (!froms.some((p) => matches(t, p))) return false;
    const except = z.except ?? [];
    return !except.some((e) => (isGlob(e) ? matches(t, e) : froms.some((p) => contains(t, resolve(p, e)))));
  });
}

/** The single files a zone names (an exception such as `src/{jobs/options,localServer/presets}.ts`), repository-relative. */
function zoneFiles(zones: readonly Zone[]): string[] {
  const patterns = zones.flatMap((z) => [z.target, z.from, z.except ?? []].flat());
  return patterns.flatMap((p) => braceExpand(p)).filter((p) => p.endsWith('.ts') && !/[*?[\]]/.test(p)).map((p) => relative(repo, resolve(repo, p)));
}

async function lintZones(): Promise<Zone[]> {
  const config = (await import(pathToFileURL(join(repo, 'eslint.config.mjs')).href)).default as { rules?: Record<string, unknown> }[];
  const zones = config.flatMap((c) => ((c.rules?.['import-x/no-restricted-paths'] as [string, { zones: Zone[] }] | undefined)?.[1].zones ?? []));
  assert.ok(zones.length > 0, 'eslint.config.mjs has no import-x/no-restricted-paths zones');
  return zones;
}

// ---- the folders on disk ------------------------------------------------------------------------

/** Every folder under `dir` that holds a file somewhere below it (an empty leftover folder is not a folder of the code). */
function codeFolders(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): boolean => {
    let any = false;
    for (const e of readdirSync(join(repo, d), { withFileTypes: true })) {
      if (e.isDirectory()) any = walk(`${d}/${e.name}`) || any;
      else any = true;
    }
    if (any) out.push(d);
    return any;
  };
  walk(dir);
  return out;
}

const sample = (unit: string): string => (unit.endsWith('.ts') ? unit : `${unit}/x.ts`);
const covers = (listed: readonly string[], unit: string): boolean => listed.some((p) => unit === p || unit.startsWith(`${p}/`));
const topFolders = (): string[] => readdirSync(join(repo, 'src')).filter((n) => statSync(join(repo, 'src', n)).isDirectory() && codeFolders(`src/${n}`).length > 0).map((n) => `src/${n}`);

test('the diagram\'s engine rooms are ENGINE_ROOMS, room by room', () => {
  const rooms = parseImports(page).filter((l) => l.room);
  assert.deepEqual(rooms.map((r) => r.from).sort(), Object.keys(ENGINE_ROOMS).sort(), 'the rooms of the diagram');
  for (const r of rooms) assert.deepEqual([...r.to].sort(), [...ENGINE_ROOMS[r.from]!].sort(), `what ${r.from} may import`);
  for (const room of Object.keys(ENGINE_ROOMS)) assert.ok(existsSync(join(repo, 'src/engine', room)), `src/engine/${room} exists`);
});

/** The line's own files (a room: its folder; the engine line: every room) and the units it must be judged against. */
function judged(line: ImportLine, units: readonly string[]): { froms: string[]; others: string[] } {
  const own = line.room ? `src/engine/${line.from}` : line.from;
  const froms = line.from === 'src/engine' ? Object.keys(ENGINE_ROOMS).map((r) => `src/engine/${r}`) : [own];
  const others = units.filter((u) => !covers([own], u) && (line.room ? u.startsWith('src/engine/') : !(line.from === 'src/engine' && u.startsWith('src/engine/'))));
  return { froms, others };
}

test('the diagram says what the lint lets each folder import, no more and no less', async () => {
  const zones = await lintZones();
  const lines = parseImports(page);
  const rooms = Object.keys(ENGINE_ROOMS).map((r) => `src/engine/${r}`);
  const files = lines.flatMap((l) => l.to).filter((t) => t.endsWith('.ts'));
  const units = [...new Set([...topFolders().filter((f) => f !== 'src/engine'), ...rooms, ...files, ...zoneFiles(zones)])];
  const layers = lines.filter((l) => !l.room).map((l) => l.from);
  assert.deepEqual([...layers].sort(), [...topFolders(), 'webview'].sort(), 'every folder of src/, and webview/, has its line');
  for (const line of lines) {
    const listed = line.room ? line.to.map((r) => `src/engine/${r}`) : line.to.map((t) => (t === 'src' ? 'src' : t));
    for (const t of listed) assert.ok(existsSync(join(repo, t)), `${line.from}: ${t} does not exist`);
    const { froms, others } = judged(line, units);
    for (const from of froms) {
      for (const u of others) {
        const allowed = !refused(zones, sample(from), sample(u));
        assert.equal(allowed, covers(listed, u), `${from} importing ${u}: the lint ${allowed ? 'allows' : 'refuses'} it, ARCHITECTURE.md says the opposite`);
      }
    }
  }
});

/** The rows of the table under `## Folders`: folder, canonical example. */
function folderRows(text: string): { folder: string; example: string }[] {
  const section = text.slice(text.indexOf('\n## Folders\n'), text.indexOf('\n## ', text.indexOf('\n## Folders\n') + 5));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const cells = l.split(' | ');
      return { folder: cells[0]!.replace(/^\| `|\/`$|`$/g, ''), example: (cells[cells.length - 1] ?? '').replace(/ \|$|`/g, '').trim() };
    });
}

test('every folder of src/ and webview/ is described, with a canonical example inside it', () => {
  const rows = folderRows(page);
  const onDisk = [...codeFolders('src'), ...codeFolders('webview')].filter((f) => f !== 'src');
  assert.deepEqual(rows.map((r) => r.folder).sort(), onDisk.sort(), 'the table of folders and the folders on disk');
  for (const { folder, example } of rows) {
    const hasFiles = readdirSync(join(repo, folder), { withFileTypes: true }).some((e) => e.isFile());
    if (example === '—') {
      assert.ok(!hasFiles, `${folder} holds files: name its canonical example`);
      continue;
    }
    assert.ok(existsSync(join(repo, example)), `${folder}: its example ${example} does not exist`);
    assert.equal(relative(folder, example).includes('/'), false, `${folder}: its example ${example} is not directly inside it`);
  }
});

/** Paths in backticks outside code blocks, from the repository's root (placeholders and build outputs left out). */
function backtickedPaths(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  const tops = new Set(readdirSync(repo));
  return [...prose.matchAll(/`([^`\n]+)`/g)]
    .map((m) => m[1]!.split(' ')[0]!)
    .filter((p) => p.includes('/') && !/[<>*{}…:]/.test(p) && !p.startsWith('/') && !/^(dist|out)\//.test(p))
    .filter((p) => tops.has(p.split('/')[0]!) || /^(src|test|webview|docs|scripts|bench|media)\//.test(p));
}

test('every path ARCHITECTURE.md names in backticks exists', () => {
  const paths = backtickedPaths(page);
  assert.ok(paths.length > 50, `only ${paths.length} paths found: the parser is broken`);
  const missing = paths.filter((p) => !existsSync(join(repo, p)));
  assert.deepEqual(missing, [], 'paths named in ARCHITECTURE.md that do not exist');
});
