/**
 * The load this benchmark puts on the system, every loop bounded in count
 * and time: sequential starts with a fresh session each (start request
 * latency, start → `task.spawned` on SSE), and closed-loop clients that each
 * start a run and wait for its terminal event on their SSE subscription
 * (throughput, CPU per run, the soak to a run count, the sustained run).
 */
import { randomUUID } from 'node:crypto';
import { quantile } from '../load.ts';
import { openRunClient, TERMINAL_TYPES } from '../run-driver.ts';
import type { RunClient } from '../run-driver.ts';
import type { ArsSystem } from './ars-system.ts';
import { sampleTree, treeCpuSince } from './proc-tree.ts';
import type { TreeSample } from './proc-tree.ts';

/** p50 / p95 / p99 of a list of milliseconds. */
export interface Percentiles {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** More errors than this in one phase is a malfunction, not a figure. */
const MAX_ERRORS = 20;

const newSession = (): string => `peer-bench-${randomUUID().slice(0, 12)}`;

/** Runs that ended, counted while the load runs. */
export interface Outcome {
  /** Every run that ended, inside the counted window or not. */
  ended: number;
  completed: number;
  failed: number;
  errors: number;
  readonly failures: Map<string, number>;
}

const emptyOutcome = (): Outcome => ({ ended: 0, completed: 0, failed: 0, errors: 0, failures: new Map() });

function countEnd(outcome: Outcome, end: { type: string; errorCode?: string }): void {
  if (end.type === 'task.completed') {
    outcome.completed += 1;
    return;
  }
  outcome.failed += 1;
  const key = `${end.type} ${end.errorCode ?? ''}`.trim();
  outcome.failures.set(key, (outcome.failures.get(key) ?? 0) + 1);
}

function countError(outcome: Outcome, error: unknown, phase: string): void {
  outcome.errors += 1;
  if (outcome.errors > MAX_ERRORS) throw new Error(`${phase}: more than ${MAX_ERRORS} errors, last: ${String(error)}`);
}

/** What {@link startLatencyPhase} measured. */
export interface StartLatency {
  /** Start request → its reply, ms. */
  readonly reply: Percentiles;
  /** Start request → the run's `task.spawned` frame on the session's SSE stream, ms. */
  readonly spawned: Percentiles;
  /** Runs of the measured starts that ended, and how. */
  readonly outcome: Outcome;
}

/**
 * `samples` starts one after another, each in a fresh session whose SSE
 * subscription is live before the start; like the peer's phase (a), a run
 * is not awaited to its end before the next start (its terminal event is
 * awaited in the background, and all of them at the end). Warm-up first:
 * `warmupMs` and at least 20 starts, not recorded.
 */
export async function startLatencyPhase(
  system: ArsSystem,
  options: {
    readonly samples: number;
    readonly warmupMs: number;
    readonly query: string;
    readonly maxMs: number;
    /**
     * Each run ended before the next start: the start's own path with nothing else in flight (a
     * diagnostic; the peer's phase a, and the figure against it, leave the run in the background).
     */
    readonly alone?: boolean;
  },
): Promise<StartLatency> {
  const api = system.client();
  const reply: number[] = [];
  const spawned: number[] = [];
  const outcome = emptyOutcome();
  const pending: Promise<void>[] = [];
  const warmUntil = performance.now() + options.warmupMs;
  const deadline = warmUntil + options.maxMs;
  let rounds = 0;
  while (reply.length < options.samples && performance.now() < deadline) {
    rounds += 1;
    const record = rounds > 20 && performance.now() >= warmUntil;
    const client = await openRunClient(api, {
      session: newSession(),
      types: ['task.spawned', ...TERMINAL_TYPES],
      mode: 'sse',
    });
    try {
      const t0 = performance.now();
      const taskId = await client.start(options.query);
      const t1 = performance.now();
      const seen = await client.next(taskId, ['task.spawned']);
      if (record) {
        reply.push(t1 - t0);
        spawned.push(seen - t0);
      }
      const ended = client
        .terminal(taskId)
        .then((end) => {
          outcome.ended += 1;
          if (record) countEnd(outcome, end);
        })
        .catch((error: unknown) => countError(outcome, error, 'start latency'))
        .finally(() => client.close());
      pending.push(ended);
      if (options.alone === true) await ended;
    } catch (error) {
      client.close();
      countError(outcome, error, 'start latency');
    }
  }
  await Promise.all(pending);
  return { reply: percentiles(reply), spawned: percentiles(spawned), outcome };
}

/** Clients in sessions of their own, each with its SSE subscription open. */
export async function openClients(system: ArsSystem, count: number): Promise<RunClient[]> {
  const api = system.client();
  return Promise.all(
    Array.from({ length: count }, () =>
      openRunClient(api, { session: newSession(), types: TERMINAL_TYPES, mode: 'sse' }),
    ),
  );
}

/**
 * Closed-loop clients: each starts a run and waits for its terminal event,
 * then the next, until `until` (performance.now() ms) or until `enough()`.
 * Runs that end between `from` and `until` are counted into `outcome`, with
 * their start → terminal latency into `latencies`.
 */
async function drive(
  clients: readonly RunClient[],
  query: string,
  window: { readonly from: number; readonly until: number; readonly enough?: () => boolean },
  outcome: Outcome,
  latencies: number[],
  phase: string,
): Promise<void> {
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < window.until && window.enough?.() !== true) {
        const t0 = performance.now();
        try {
          const taskId = await client.start(query);
          const end = await client.terminal(taskId);
          const t1 = performance.now();
          outcome.ended += 1;
          if (t1 < window.from || t1 > window.until) continue;
          latencies.push(t1 - t0);
          countEnd(outcome, end);
        } catch (error) {
          countError(outcome, error, phase);
        }
      }
    }),
  );
}

/** What {@link throughputPhase} measured. */
export interface Throughput {
  readonly clients: number;
  readonly seconds: number;
  readonly runsPerSecond: number;
  readonly outcome: Outcome;
  /** Start → terminal event, ms. */
  readonly latency: Percentiles;
  /** CPU seconds of the tree in the window, the supervisor left out. */
  readonly cpuSeconds: number;
  /** CPU seconds of the supervisor in the window. */
  readonly supervisorCpuSeconds: number;
  /** CPU seconds in the window of each process of the tree, by name. */
  readonly cpuByProcess: Record<string, number>;
}

/**
 * `clients` closed-loop clients for `warmupMs` then `durationMs`; runs and
 * the tree's CPU time are counted in the second window only.
 */
export async function throughputPhase(
  system: ArsSystem,
  options: { readonly clients: number; readonly warmupMs: number; readonly durationMs: number; readonly query: string },
): Promise<Throughput> {
  const clients = await openClients(system, options.clients);
  const from = performance.now() + options.warmupMs;
  const until = from + options.durationMs;
  const samples: TreeSample[] = [];
  const take = () => samples.push(sampleTree(system.supervisorPid));
  const timers = [setTimeout(take, options.warmupMs), setTimeout(take, options.warmupMs + options.durationMs)];
  const outcome = emptyOutcome();
  const latencies: number[] = [];
  try {
    await drive(clients, options.query, { from, until }, outcome, latencies, 'throughput');
  } finally {
    for (const timer of timers) clearTimeout(timer);
    for (const client of clients) client.close();
  }
  const [before, after] = samples;
  if (before === undefined || after === undefined) throw new Error('throughput: the CPU samples were not taken');
  const byProcess: Record<string, number> = {};
  for (const p of after.processes) {
    const then = before.processes.find((q) => q.pid === p.pid)?.cpuSeconds ?? 0;
    byProcess[p.name] = (byProcess[p.name] ?? 0) + (p.cpuSeconds - then);
  }
  const seconds = (after.at - before.at) / 1000;
  const runs = outcome.completed + outcome.failed;
  return {
    clients: options.clients,
    seconds,
    runsPerSecond: runs / seconds,
    outcome,
    latency: percentiles(latencies),
    cpuSeconds: treeCpuSince(before, after, system.excludedPid),
    supervisorCpuSeconds: treeCpuSince(
      { at: before.at, processes: before.processes.filter((p) => p.pid === system.supervisorPid) },
      { at: after.at, processes: after.processes.filter((p) => p.pid === system.supervisorPid) },
    ),
    cpuByProcess: byProcess,
  };
}

/** Closed-loop clients until `runs` more runs ended or `maxMs` passed. */
export async function soakPhase(
  system: ArsSystem,
  options: { readonly clients: number; readonly runs: number; readonly maxMs: number; readonly query: string },
): Promise<{ readonly outcome: Outcome; readonly seconds: number; readonly reached: boolean }> {
  const clients = await openClients(system, options.clients);
  const outcome = emptyOutcome();
  const started = performance.now();
  const enough = () => outcome.completed + outcome.failed >= options.runs;
  try {
    await drive(clients, options.query, { from: started, until: started + options.maxMs, enough }, outcome, [], 'soak');
  } finally {
    for (const client of clients) client.close();
  }
  return { outcome, seconds: (performance.now() - started) / 1000, reached: enough() };
}

/** The sustained run: closed-loop clients for `seconds`, the tree sampled every `everyS` seconds. */
export async function sustainPhase(
  system: ArsSystem,
  options: { readonly clients: number; readonly seconds: number; readonly everyS: number; readonly query: string },
): Promise<{ readonly outcome: Outcome; readonly samples: readonly { t: number; sample: TreeSample }[] }> {
  const clients = await openClients(system, options.clients);
  const outcome = emptyOutcome();
  const started = performance.now();
  const samples: { t: number; sample: TreeSample }[] = [];
  const take = () =>
    samples.push({ t: (performance.now() - started) / 1000, sample: sampleTree(system.supervisorPid) });
  take();
  const timer = setInterval(take, options.everyS * 1000);
  try {
    await drive(
      clients,
      options.query,
      { from: started, until: started + options.seconds * 1000 },
      outcome,
      [],
      'sustain',
    );
  } finally {
    clearInterval(timer);
    for (const client of clients) client.close();
  }
  take();
  return { outcome, samples };
}
