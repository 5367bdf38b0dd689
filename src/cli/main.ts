// The `llm-profiler` command: dispatches to each subcommand. Subcommands other than `run` are
// loaded on use, so that `run` starts fast and a missing surface does not break the rest.
import { runCommand } from './run';
import { TOOL_VERSION } from '../engine/runFile';

const USAGE = `Usage: llm-profiler <command> [options]

Commands
  run            profile an endpoint: TTFT, TPOT, ITL, E2E, throughput, goodput, stalls
  sweep          run a workload at several concurrencies/rates/prompt lengths and fit the trade-off
  prefill-dial   compare prefill chunk sizes on the local server
  serve          start the bundled local server

Run "llm-profiler <command> --help" for a command's options.
`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run':
      return runCommand(rest);
    case 'sweep': {
      const { sweepCommand } = await import('./sweep');
      return sweepCommand(rest);
    }
    case 'prefill-dial': {
      const { prefillDialCommand } = await import('./sweep');
      return prefillDialCommand(rest);
    }
    case 'serve': {
      const { serveCommand } = await import('./serve');
      return serveCommand(rest);
    }
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case '-V':
    case '--version':
      process.stdout.write(`${TOOL_VERSION}\n`);
      return 0;
    case undefined:
      process.stderr.write(USAGE);
      return 2;
    default:
      process.stderr.write(`llm-profiler: unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

// Exit explicitly: a socket still closing must not hold the terminal. Writes to pipes, files and
// terminals are synchronous on Linux and macOS, so nothing printed is lost.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`llm-profiler: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
