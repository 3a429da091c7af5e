/**
 * What the benchmark and the system's supervisor process (`system-child.ts`)
 * tell each other: the settings it is started with (argv[2], JSON) and the
 * line it prints once the system is ready.
 */

/** What the benchmark asks of the system. */
export interface SystemChildSettings {
  readonly mode: 'one-process' | 'split';
  /** Replace every service but the gateway by the floor executor (split mode only). */
  readonly floor?: 'events' | 'queue';
  /** Extra environment of every service. */
  readonly env: Record<string, string>;
  /** Node.js flags of `ars up`'s process instead of `ARS_NODE_FLAGS` (not the floor's). */
  readonly nodeFlags?: readonly string[];
}

/** The line the child prints once the system is ready. */
export const READY_PREFIX = 'ARS_BENCH_SYSTEM ';

/** What the ready line carries. */
export interface SystemReady {
  readonly baseUrl: string;
  readonly token: string;
  readonly natsUrl: string;
  /** The supervisor's children by name (the floor executor as `floor-executor`). */
  readonly processes: readonly { readonly name: string; readonly pid: number }[];
}
