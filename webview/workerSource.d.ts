// `worker-source:PATH` imports (esbuild.mjs's workerSource plugin): the file bundled on its own, as a
// string, its module's default export (the plugin's shape: a declaration, not an export of ours).
declare module 'worker-source:*' {
  const source: string;
  // eslint-disable-next-line import-x/no-default-export
  export default source;
}
