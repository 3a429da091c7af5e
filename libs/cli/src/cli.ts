import { fileURLToPath } from 'node:url';
import {
  callCommand,
  eventsCommand,
  infoCommand,
  reportClientError,
  tokenCommand,
} from './commands/client-commands.ts';
import { testCommand } from './commands/test.ts';
import { upCommand } from './commands/up.ts';
import { EXIT } from './io.ts';
import type { Io } from './io.ts';
import { USAGE } from './usage.ts';

/** The repository root (this file is libs/cli/src/cli.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const CLIENT_COMMANDS: Record<string, (io: Io, args: readonly string[]) => Promise<number>> = {
  token: tokenCommand,
  call: callCommand,
  events: eventsCommand,
  info: infoCommand,
};

/**
 * Runs one `ars` command line and resolves with its exit code: 0 success,
 * 1 failure, 2 usage error (an unknown command prints the usage on stderr).
 */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'up':
      if (args.some((arg) => arg !== '--split'))
        return usageError(
          io,
          `up takes only --split (configure it with PORT, HOST, DATA_DIR, NATS_URL, NATS_MEMORY_LIMIT_MIB, MONGO_URL, STORE_ENGINE, ARS_UP_MODE)`,
        );
      return upCommand(io, { split: args.includes('--split') });
    case 'test':
      return testCommand(io, REPO_ROOT, args);
    case 'help':
    case '--help':
    case '-h':
      io.stdout(USAGE);
      return EXIT.ok;
    case undefined:
      return usageError(io, 'a command is required');
    default: {
      const run = CLIENT_COMMANDS[command];
      if (!run) return usageError(io, `unknown command "${command}"`);
      try {
        return await run(io, args);
      } catch (error) {
        return reportClientError(io, command, error);
      }
    }
  }
}

function usageError(io: Io, message: string): number {
  io.stderr(`ars: ${message}\n\n${USAGE}`);
  return EXIT.usage;
}
