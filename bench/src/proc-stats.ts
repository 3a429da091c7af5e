/**
 * Resident memory and CPU time of processes, read from Linux `/proc`.
 * The benchmarks sample the system's own processes (nats-server, every
 * service) and the load generator with these.
 */
import { readFileSync } from 'node:fs';

/** Linux reports CPU times in USER_HZ ticks, 100 per second on every architecture Node runs on. */
const CLOCK_TICKS = 100;

/** A process to sample. */
export interface NamedProcess {
  readonly name: string;
  readonly pid: number;
}

/** Resident set size of `pid` in bytes (`VmRSS`); NaN when the process is gone. */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** User plus system CPU time of `pid` in seconds; NaN when the process is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ') '.
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds of each process at one instant, to diff later. */
export function cpuSnapshot(processes: readonly NamedProcess[]): Map<string, number> {
  return new Map(processes.map((p) => [p.name, cpuSeconds(p.pid)]));
}

/** CPU seconds each process used since `before`. */
export function cpuSince(processes: readonly NamedProcess[], before: Map<string, number>): Map<string, number> {
  return new Map(processes.map((p) => [p.name, cpuSeconds(p.pid) - (before.get(p.name) ?? Number.NaN)]));
}

/** Mebibytes with one decimal. */
export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
