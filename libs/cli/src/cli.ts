import { fileURLToPath } from 'node:url';
import { callCommand, eventsCommand, infoCommand, tokenCommand } from './commands/client-commands.ts';
import { reportClientError } from './commands/client-support.ts';
import { runCommand } from './commands/run.command.ts';
import {
  approveCommand,
  cancelCommand,
  pauseCommand,
  redirectCommand,
  rejectCommand,
  resumeCommand,
  tasksCommand,
} from './commands/task-commands.ts';
import type { UpOptions } from './commands/up.ts';
import { EXIT } from './io.ts';
import { LOG_FORMATS } from './log-format.ts';
import type { LogFormat } from './log-format.ts';
import type { Io } from './io.ts';
import { USAGE } from './usage.ts';

/** The repository root (this file is libs/cli/src/cli.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const CLIENT_COMMANDS: Record<string, (io: Io, args: readonly string[]) => Promise<number>> = {
  token: tokenCommand,
  call: callCommand,
  events: eventsCommand,
  info: infoCommand,
  run: runCommand,
  tasks: tasksCommand,
  approve: approveCommand,
  reject: rejectCommand,
  cancel: cancelCommand,
  pause: pauseCommand,
  resume: resumeCommand,
  redirect: redirectCommand,
};

/** The options of `up [--split] [--log-format json|pretty]` (also `--log-format=json`); undefined for anything else. */
export function parseUpArgs(args: readonly string[]): UpOptions | undefined {
  let split = false;
  let logFormat: LogFormat = 'pretty';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--split') split = true;
    else if (arg === '--log-format' || arg.startsWith('--log-format=')) {
      const value = arg === '--log-format' ? args[++i] : arg.slice('--log-format='.length);
      if (!(LOG_FORMATS as readonly (string | undefined)[]).includes(value)) return undefined;
      logFormat = value as LogFormat;
    } else return undefined;
  }
  return { split, logFormat };
}

/**
 * Runs one `ars` command line and resolves with its exit code: 0 success,
 * 1 failure, 2 usage error (an unknown command prints the usage on stderr);
 * `run --follow` also exits by the run's end (RUN_EXIT of run.command.ts).
 */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'up': {
      const options = parseUpArgs(args);
      if (options === undefined)
        return usageError(
          io,
          `up takes only --split and --log-format json|pretty (configure it with PORT, HOST, DATA_DIR, NATS_URL, NATS_MEMORY_LIMIT_MIB, MONGO_URL, STORE_ENGINE, STORE_LOCKING, ARS_UP_MODE)`,
        );
      // Imported here, not above: the system's modules (the bus, OpenTelemetry) are no client command's business.
      const { upCommand } = await import('./commands/up.ts');
      return upCommand(io, options);
    }
    case 'test': {
      const { testCommand } = await import('./commands/test.ts');
      return testCommand(io, REPO_ROOT, args);
    }
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
