// What of node-llama-cpp's runtime ships inside a platform VSIX and the CLI's tarball
// (scripts/package.ts): code and licences, not sources, maps, types, docs or llama.cpp's source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PLATFORMS, runtimePackages, ships } from '../../scripts/package';

test('runtime files ship; sources, maps, types, docs and build inputs do not; licences always do', () => {
  for (const f of ['node_modules/node-llama-cpp/dist/index.js', 'node_modules/yargs/locales/en.json', 'node_modules/node-llama-cpp/llama/llama.cpp.info.json',
    'node_modules/node-llama-cpp/llama/grammars/json.gbnf', 'node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-zen4.so', 'node_modules/ms/license.md', 'node_modules/tar/LICENSE.md']) {
    assert.equal(ships(f, false), true, f);
  }
  for (const f of ['node_modules/node-llama-cpp/dist/index.d.ts', 'node_modules/node-llama-cpp/dist/index.js.map', 'node_modules/chalk/readme.md',
    'node_modules/node-llama-cpp/llama/gitRelease.bundle', 'node_modules/node-llama-cpp/llama/CMakeLists.txt', 'node_modules/node-addon-api/napi.h',
    'node_modules/node-addon-api/common.gypi', 'node_modules/@huggingface/jinja/tsconfig.json', 'node_modules/foo/.npmignore']) {
    assert.equal(ships(f, false), false, f);
  }
  for (const d of ['node_modules/node-llama-cpp/llama/addon', 'node_modules/node-llama-cpp/llama/cmake', 'node_modules/node-llama-cpp/templates', 'node_modules/foo/test', 'node_modules/foo/.github']) {
    assert.equal(ships(d, true), false, d);
  }
  for (const d of ['node_modules/node-llama-cpp/llama', 'node_modules/node-llama-cpp/llama/grammars', 'node_modules/node-llama-cpp/dist/evaluator']) assert.equal(ships(d, true), true, d);
});

test('the runtime is node-llama-cpp and its dependencies as installed, no platform binary and no optional helper', () => {
  const pkgs = runtimePackages();
  assert.ok(pkgs.includes('node_modules/node-llama-cpp'));
  assert.ok(pkgs.includes('node_modules/lifecycle-utils'), 'a direct dependency');
  assert.ok(!pkgs.some((p) => p.startsWith('node_modules/@node-llama-cpp/')), 'binaries are added per target');
  assert.ok(!pkgs.some((p) => p.includes('@reflink')), 'optional dependencies stay out');
  assert.ok(!pkgs.some((p) => /(^|\/)(typescript|esbuild|eslint)$/.test(p)), 'no development tools');
});

test('one VSIX target per prebuilt CPU binary package, named as vsce names its targets', () => {
  const vsceTargets = ['win32-x64', 'win32-arm64', 'linux-x64', 'linux-arm64', 'linux-armhf', 'darwin-x64', 'darwin-arm64', 'alpine-x64', 'alpine-arm64'];
  for (const p of PLATFORMS) {
    assert.ok(vsceTargets.includes(p.target), p.target);
    assert.doesNotMatch(p.binary, /cuda|vulkan/, 'CPU binaries only');
  }
  assert.equal(new Set(PLATFORMS.map((p) => p.target)).size, PLATFORMS.length);
});
