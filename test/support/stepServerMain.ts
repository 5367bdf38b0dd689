// The step server as its own process: `node --import tsx test/support/stepServerMain.ts '<options JSON>'`.
// Prints `{"port":N}` once listening; exits when stdin closes (so it never outlives its parent) or on SIGTERM.
import { startStepServer } from './stepServer';
import type { StepServerOptions } from './stepServer';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as StepServerOptions;
  const server = await startStepServer(options);
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
  process.stderr.write(`step server: ${(err as Error).message}\n`);
  process.exit(1);
});
