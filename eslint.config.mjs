// ESLint (flat config): typescript-eslint's syntax-only `recommended` set, a few import rules, and the
// layout of ARCHITECTURE.md as import boundaries, per folder. `npm run lint`; test/unit/layout.test.ts
// proves that each boundary rule fails on a violation, and ARCHITECTURE.md's table of rooms is checked
// against ENGINE_ROOMS (engineRooms.mjs; test/unit/architecture.test.ts).
//
// How a boundary is expressed:
// - where an import may come from inside the repository: `import-x/no-restricted-paths` zones over
//   resolved files (static, dynamic `import()` and `require()` alike, whatever the relative spelling);
// - packages (`vscode`, node builtins) and the few "type-only" exceptions:
//   `@typescript-eslint/no-restricted-imports` (it knows `import type`), and `no-restricted-syntax` for
//   the same names in a dynamic `import()` or `require()`, which that rule does not see.
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { ENGINE_ROOMS } from './engineRooms.mjs';

const root = import.meta.dirname;
const abs = (p) => join(root, p);

// ---- boundaries ---------------------------------------------------------------------------------

const noVscode = { kind: 'name', name: 'vscode', message: 'this layer must run without VS Code.' };
// every node builtin, bare (`fs`, `fs/promises`) or `node:`-prefixed (including `node:test` and other prefix-only ones)
const builtinNames = [...new Set(builtinModules.filter((m) => !m.startsWith('_')).map((m) => m.split('/')[0]))];
const builtinRegex = `^(?:node:.+|(?:${builtinNames.join('|')})(?:/.*)?)$`;
const nodeBuiltins = (allowTypeImports, message) => ({ kind: 'regex', regex: builtinRegex, allowTypeImports, message });

/**
 * One folder's package and type-only restrictions as the options of `@typescript-eslint/no-restricted-imports`
 * and `no-restricted-syntax` (dynamic imports of value code: a type cannot be imported dynamically).
 * Each folder gets one object: a later config object's options replace an earlier one's, they do not add up.
 */
function restrict(files, restrictions, ignores = []) {
  const paths = restrictions.filter((r) => r.kind === 'name').map(({ name, message, allowTypeImports }) => ({ name, message, allowTypeImports }));
  const patterns = restrictions.filter((r) => r.kind === 'regex').map(({ regex, message, allowTypeImports }) => ({ regex, message, allowTypeImports }));
  // esquery's regex literal cannot hold a `/`
  const esq = (r) => (r.kind === 'name' ? `'${r.name}'` : `/${r.regex.replaceAll('/', '\\x2F')}/`);
  const syntax = restrictions.flatMap((r) => [
    { selector: `ImportExpression[source.value=${esq(r)}]`, message: `Dynamic import: ${r.message}` },
    { selector: `CallExpression[callee.name='require'][arguments.0.value=${esq(r)}]`, message: `require(): ${r.message}` },
  ]);
  return {
    files,
    ignores,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }],
      'no-restricted-syntax': ['error', ...syntax],
    },
  };
}

const typeOnly = (regex, message) => ({ kind: 'regex', regex, allowTypeImports: true, message });
const protocolTypeOnly = typeOnly('(?:^|/)shared/protocol(?:\\.ts)?$', 'the protocol crosses into the webview as types only: `import type`.');
const jobsTypeOnly = typeOnly('(?:^|/)jobs(?:/|$)', 'src/present is used by the webview: it may import jobs/ only with `import type`.');

const webviewRestrictions = [
  { ...noVscode, message: 'the webview runs in a browser.' },
  // node builtins: import-x/no-nodejs-modules below (every form, `import type` included)
  protocolTypeOnly,
];

const rooms = Object.keys(ENGINE_ROOMS);
const roomZones = rooms.map((room) => ({
  target: `src/engine/${room}`,
  // a loose file in src/engine belongs to no room: every room is kept from it, so it has to move into one
  from: ['src/engine/*.ts', ...rooms.filter((r) => r !== room && !ENGINE_ROOMS[room].includes(r)).map((r) => `src/engine/${r}/**`)].map(abs),
  message: `src/engine/${room} may import only ${ENGINE_ROOMS[room].map((r) => `src/engine/${r}`).join(', ') || 'itself'} of the engine (ENGINE_ROOMS).`,
}));

const zones = [
  ...roomZones,
  { target: 'src', from: 'webview', message: 'src/ never imports the webview: the webview is bundled for a browser on its own.' },
  { target: 'src/engine', from: ['src/localServer', 'src/jobs', 'src/present', 'src/shared', 'src/extension', 'src/cli'], message: 'the engine is the bottom layer: it imports nothing from outside src/engine.' },
  { target: 'src/localServer', from: ['src/jobs', 'src/present', 'src/shared', 'src/extension', 'src/cli'], message: 'the local server sits beside the engine: it imports only the engine.' },
  {
    target: 'src/shared',
    from: [abs('src/**')],
    except: [abs('src/shared/**'), abs('src/engine/core/**')],
    message: 'src/shared (the protocol) imports only the engine\'s core/ (its types) from src/: the webview takes it too.',
  },
  { target: 'src/jobs', from: ['src/extension', 'src/cli', 'src/present', 'src/shared'], message: 'jobs sit below the surfaces: they import the engine and the local server only.' },
  {
    target: 'src/present',
    from: [abs('src/**')],
    except: [abs('src/{present,shared,jobs}/**'), abs('src/engine/{core,analysis}/**')],
    message: 'src/present is used by the webview: from src/ it may import only shared/, jobs/ (types), and the engine\'s core/ and analysis/.',
  },
  { target: 'src/cli', from: 'src/extension', message: 'the CLI runs without VS Code: nothing from the extension.' },
  { target: 'src/extension', from: 'src/cli', message: 'the extension and the CLI share jobs/ and present/, not each other.' },
  {
    target: 'webview',
    from: [abs('src/**')],
    // `except` must be globs when `from` is one, and the rule matches them against absolute paths as they are
    except: [abs('src/{shared,present}/**'), abs('src/engine/{core,analysis}/**'), abs('src/{jobs/options,localServer/presets}.ts')],
    message: 'the webview may import from src/ only shared/, present/, jobs/options, localServer/presets and the engine\'s core/ and analysis/ (pure, no node builtins).',
  },
];

// ---- the config ---------------------------------------------------------------------------------

export default defineConfig([
  globalIgnores(['dist/', 'out/', 'test-artifacts/', '.llm-profiler/', '.gl/']),

  {
    files: ['**/*.ts', '**/*.mjs'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    plugins: { 'import-x': importX },
    languageOptions: { globals: { ...globals.node } },
    settings: {
      'import-x/extensions': ['.ts', '.mts', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts'] },
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      // extensionless TypeScript imports ('./types', '../engine/runner') resolve to the .ts file
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.json', '.node'] })],
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'import-x/no-default-export': 'error',
      'import-x/no-duplicates': 'error',
    },
  },

  {
    files: ['webview/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },

  // import cycles: `import type` edges are ignored (the rule always skips them: they vanish at build time)
  {
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { basePath: root, zones }],
    },
  },

  restrict(['src/engine/**/*.ts', 'src/localServer/**/*.ts', 'src/cli/**/*.ts', 'src/jobs/**/*.ts'], [noVscode]),
  restrict(['src/present/**/*.ts'], [noVscode, jobsTypeOnly]),
  {
    files: ['src/present/**/*.ts', 'webview/**/*.ts', 'src/engine/{core,analysis}/**/*.ts'],
    rules: { 'import-x/no-nodejs-modules': 'error' },
  },
  restrict(['src/shared/**/*.ts'], [
    { ...noVscode, message: 'shared code is imported by the webview too.' },
    nodeBuiltins(true, 'shared code is imported by the webview too: node modules with `import type` only.'),
  ]),
  restrict(['src/extension/**/*.ts'], [protocolTypeOnly], ['src/extension/promptWorker/**/*.ts']),
  // the prompt reader's worker thread and the host's side of it, tested under node: no VS Code in either
  restrict(['src/extension/promptWorker/**/*.ts'], [protocolTypeOnly, { ...noVscode, message: 'the prompt reader runs on a worker thread, which has no VS Code.' }]),
  restrict(['webview/**/*.ts'], webviewRestrictions),

  // config files and node:test reporters are loaded through their default export
  {
    files: ['eslint.config.mjs', 'scripts/*Reporter.mjs'],
    rules: { 'import-x/no-default-export': 'off' },
  },
]);
