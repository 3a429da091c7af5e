import type { Environment } from './config.ts';

/** What a command may touch of its process: output, the environment snapshot, the terminal. */
export interface Io {
  readonly env: Environment;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** True when stdout is a terminal (colors). */
  readonly isTty: boolean;
}

/** Exit codes of the `ars` command. */
export const EXIT = {
  ok: 0,
  /** A command failed (a request refused, a service that did not start). */
  failure: 1,
  /** Usage or configuration error: unknown command, bad arguments, invalid environment. */
  usage: 2,
} as const;
