// The scripted server as its own process: `node --import tsx test/support/scriptedServerMain.ts '<options JSON>'`.
// Prints `{"port":N}` once listening; exits when stdin closes (so it never outlives its parent) or on SIGTERM.
import { startScriptedServer } from './scriptedServer';
import type { ScriptedServerOptions } from './scriptedServer';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as ScriptedServerOptions;
  const server = await startScriptedServer(options);
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void server.close().then(() => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`scripted server: ${(err as Error).message}\n`);
  process.exit(1);
});
