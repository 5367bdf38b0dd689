// The `llm-profiler` command: dispatches to each subcommand. `serve` is loaded on use, so that a
// missing surface does not break the rest.
import { TOOL_VERSION } from '../engine/core/runFormat';
import { EXIT } from './io';
import { jobCommand } from './jobCommand';
import { MAIN_USAGE } from './usage';

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run':
    case 'sweep':
    case 'prefill-dial':
    case 'cache-check':
      return jobCommand(command, rest);
    case 'serve': {
      const { serveCommand } = await import('./serve');
      return serveCommand(rest);
    }
    case 'import': {
      const { importCommand } = await import('./importCommand');
      return importCommand(rest);
    }
    case 'compare': {
      const { compareCommand } = await import('./compareCommand');
      return compareCommand(rest);
    }
    case 'recover': {
      const { recoverCommand } = await import('./recoverCommand');
      return recoverCommand(rest);
    }
    case 'ab': {
      const { abCommand } = await import('./abCommand');
      return abCommand(rest);
    }
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(MAIN_USAGE);
      return EXIT.ok;
    case '-V':
    case '--version':
      process.stdout.write(`${TOOL_VERSION}\n`);
      return EXIT.ok;
    case undefined:
      process.stderr.write(MAIN_USAGE);
      return EXIT.usage;
    default:
      process.stderr.write(`llm-profiler: unknown command "${command}"\n${MAIN_USAGE}`);
      return EXIT.usage;
  }
}

// Exit explicitly: a socket still closing must not hold the terminal. Writes to pipes, files and
// terminals are synchronous on Linux and macOS, so nothing printed is lost.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`llm-profiler: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(EXIT.failed);
  },
);
