/**
 * A process and all its descendants, read from Linux `/proc`: resident
 * memory and CPU time of a whole server tree (the peer's `langgraphjs dev`
 * and its children; this system's supervisor, nats-server and services).
 * The tree is walked again at every sample, so that a child started later
 * (the peer's esbuild, an MCP server) is counted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpuSeconds, rssBytes } from '../proc-stats.ts';

/** One process of a tree at one instant. */
export interface TreeProcess {
  readonly pid: number;
  readonly parent: number;
  /** Its role, see {@link processName}. */
  readonly name: string;
  readonly rssBytes: number;
  /** User plus system CPU time since the process started, in seconds. */
  readonly cpuSeconds: number;
}

/** A tree at one instant. */
export interface TreeSample {
  readonly at: number;
  readonly processes: readonly TreeProcess[];
}

function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** What a command line runs, by the script it names (this system's and the peer's processes). */
const ROLES: readonly (readonly [RegExp, string])[] = [
  [/libs\/cli\/src\/main\.ts|bench\/src\/peer\/system-child\.ts/, 'supervisor'],
  [/deploy\/src\/one-process\/main\.ts/, 'system'],
  [/services\/run-executor\/bench\/floor-executor\.ts/, 'floor-executor'],
  [/services\/([a-z-]+)\/src\/main\.ts/, '$1'],
  // The peer's tree, in bench.mjs's order (tsx watch's command line names the entrypoint too).
  [/tsx\/dist\/cli\.mjs/, 'tsx-watch'],
  [/esbuild/, 'esbuild'],
  [/entrypoint\.mjs/, 'server'],
  [/langgraphjs/, 'cli'],
  [/nats-server/, 'nats-server'],
];

/** A process's role from its command line (see ROLES), else its `comm`. */
export function processName(pid: number): string {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    for (const [pattern, role] of ROLES) {
      const match = pattern.exec(command);
      if (match !== null) return role.replace('$1', match[1] ?? '');
    }
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return `pid ${pid}`;
  }
}

/** `root` and every live descendant, parents before children. */
export function descendants(root: number): { pid: number; parent: number }[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(entry);
    if (parent === undefined) continue;
    const list = children.get(parent);
    if (list === undefined) children.set(parent, [Number(entry)]);
    else list.push(Number(entry));
  }
  const out: { pid: number; parent: number }[] = [];
  const queue = [{ pid: root, parent: 0 }];
  // A pid tree has no cycles, but a reused pid could make one: visit each pid once.
  const seen = new Set<number>();
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.has(next.pid)) continue;
    seen.add(next.pid);
    out.push(next);
    for (const child of children.get(next.pid) ?? []) queue.push({ pid: child, parent: next.pid });
  }
  return out;
}

/** Samples `root`'s tree, each process named by {@link processName}. */
export function sampleTree(root: number): TreeSample {
  const processes = descendants(root)
    .map(({ pid, parent }) => ({
      pid,
      parent,
      name: processName(pid),
      rssBytes: rssBytes(pid),
      cpuSeconds: cpuSeconds(pid),
    }))
    .filter((p) => !Number.isNaN(p.rssBytes));
  return { at: performance.now(), processes };
}

/** Resident bytes of a sample's processes, optionally leaving out `exclude`. */
export function treeRss(sample: TreeSample, exclude?: number): number {
  return sample.processes.filter((p) => p.pid !== exclude).reduce((sum, p) => sum + p.rssBytes, 0);
}

/**
 * CPU seconds the tree used between two samples, optionally leaving out
 * `exclude`. A process that appeared in between counts from zero; one that
 * exited in between is lost (its time is not in `after`).
 */
export function treeCpuSince(before: TreeSample, after: TreeSample, exclude?: number): number {
  const then = new Map(before.processes.map((p) => [p.pid, p.cpuSeconds]));
  return after.processes
    .filter((p) => p.pid !== exclude)
    .reduce((sum, p) => sum + Math.max(0, p.cpuSeconds - (then.get(p.pid) ?? 0)), 0);
}

/** Megabytes (MiB) of a byte count, as a number. */
export function toMiB(bytes: number): number {
  return bytes / 1024 / 1024;
}

/** `name MiB` of each process of a sample, largest first, optionally leaving out `exclude`. */
export function describeTree(sample: TreeSample, exclude?: number): string {
  return sample.processes
    .filter((p) => p.pid !== exclude)
    .sort((a, b) => b.rssBytes - a.rssBytes)
    .map((p) => `${p.name} ${toMiB(p.rssBytes).toFixed(0)}`)
    .join(', ');
}
