// The engine's rooms, read by eslint.config.mjs (one import zone per room), test/unit/layout.test.ts
// and test/unit/architecture.test.ts (ARCHITECTURE.md's table of rooms must match).

/**
 * The engine's rooms (src/engine/<room>), lowest first, each with the rooms it may import besides itself.
 * `core` and `analysis` import no node builtin, so the webview may use them.
 */
export const ENGINE_ROOMS = {
  core: [],
  analysis: ['core'],
  files: ['core', 'analysis'],
  prompts: ['core', 'files'],
  transport: ['core', 'analysis'],
  run: ['core', 'analysis', 'files', 'prompts', 'transport'],
};
