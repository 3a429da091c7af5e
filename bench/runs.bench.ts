/**
 * Benchmark (issue 3): runs through the whole system, every process on this
 * machine (nats-server, the six services, the gateway, this load generator).
 *
 * 1. latency:    start → `task.spawned` seen on SSE, and start → reply, at one client
 *                (each run awaited to its end before the next start).
 * 2. throughput: 3-step scripted runs/s, `--clients` concurrent clients (own
 *                session, own SSE subscription), each waiting for its run's
 *                terminal event before starting the next; CPU per run of each process.
 * 3. control:    `inject_context` request → `control.applied` on SSE, at one client, on a live run.
 * 4. rss:        resident memory of every process sampled over a sustained
 *                throughput run of `--sustain` seconds.
 *
 *   node bench/runs.bench.ts [--phases latency,throughput,control,rss] [--samples 300]
 *     [--duration 20000] [--warmup 5000] [--clients 16] [--executors 1] [--sustain 60]
 *     [--warm-after SECONDS (a fifth of --sustain)] [--sample-every 5] [--rss-series] [--env K=V,K=V]
 *     [--node-flags 'FLAGS' (default the supervisor's SERVICE_NODE_FLAGS; '' for none)] [--mongo-url URL] [--cpu-prof-dir DIR]
 *     [--nats-memory-limit MiB (default the supervisor's; 0 for Go's defaults)]
 *     [--nats-stats (NATS messages per run of each service, from the nats-server's /connz)]
 *     [--floor events|queue]
 *
 * `--floor` measures the floor of a run's message flow instead of the
 * services: every service but the gateway is stopped, and
 * `services/run-executor/bench/floor-executor.ts` answers `start` and
 * publishes the nineteen events of the three-step run through the
 * executor's own event pipeline (`queue`: through the RUNS work queue as
 * well). What the whole system spends beyond that is the services' work.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ArsClient } from '@ars/client';
import { SERVICE_NAMES } from '@ars/contracts';
import { findFreePort, SERVICE_NODE_FLAGS, startTestSystem } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { quantile } from './src/load.ts';
import { connectionCounts, countsSince } from './src/nats-stats.ts';
import type { MessageCounts } from './src/nats-stats.ts';
import { cpuSince, cpuSnapshot, mib, rssBytes } from './src/proc-stats.ts';
import type { NamedProcess } from './src/proc-stats.ts';
import { openRunClient, sseAvailable, TERMINAL_TYPES } from './src/run-driver.ts';
import type { RunClient, WaitMode } from './src/run-driver.ts';

const { values } = parseArgs({
  options: {
    phases: { type: 'string', default: 'latency,throughput,control,rss' },
    samples: { type: 'string', default: '300' },
    duration: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '5000' },
    clients: { type: 'string', default: '16' },
    executors: { type: 'string', default: '1' },
    sustain: { type: 'string', default: '60' },
    'warm-after': { type: 'string' },
    'sample-every': { type: 'string', default: '5' },
    'rss-series': { type: 'boolean', default: false },
    env: { type: 'string', default: '' },
    'node-flags': { type: 'string' },
    'mongo-url': { type: 'string' },
    'nats-memory-limit': { type: 'string' },
    'nats-stats': { type: 'boolean', default: false },
    'cpu-prof-dir': { type: 'string' },
    query: { type: 'string', default: '#script tool:echo{"a":1};tool:echo{"b":2};finish:done' },
    floor: { type: 'string' },
  },
});
const PHASES = new Set(values.phases.split(','));
const SAMPLES = Number(values.samples);
const DURATION_MS = Number(values.duration);
const WARMUP_MS = Number(values.warmup);
const CLIENTS = Number(values.clients);
const EXECUTORS = values.executors.split(',').map(Number);
const SUSTAIN_S = Number(values.sustain);
/** Where the rss phase counts the system warm: by default a fifth of the run. */
const WARM_AFTER_S = values['warm-after'] === undefined ? SUSTAIN_S / 5 : Number(values['warm-after']);
const SAMPLE_EVERY_S = Number(values['sample-every']);
/** Node.js flags of every service process: the supervisor's unless `--node-flags` ('' for none). */
const NODE_FLAGS: readonly string[] =
  values['node-flags'] === undefined ? SERVICE_NODE_FLAGS : values['node-flags'].split(' ').filter((f) => f !== '');
const QUERY = values.query;
const MONGO_URL = values['mongo-url'];
/** The spawned nats-server's memory budget in MiB (0: Go's defaults); unset keeps the supervisor's default. */
const NATS_MEMORY_LIMIT = values['nats-memory-limit'] === undefined ? undefined : Number(values['nats-memory-limit']);
/** Report NATS messages per run from the nats-server's monitoring endpoint (served on a free port). */
const NATS_STATS = values['nats-stats'];
const MONITOR_PORT = NATS_STATS ? await findFreePort() : 0;
/** `--floor`: the floor executor's mode, or undefined for the real system. */
const FLOOR = values.floor;
if (FLOOR !== undefined && FLOOR !== 'events' && FLOOR !== 'queue') throw new Error('--floor takes events or queue');
if (FLOOR !== undefined && PHASES.has('control'))
  throw new Error('--floor runs have no controls: leave out the control phase');

const print = (line: string) => process.stdout.write(`${line}\n`);
const f = (n: number, digits = 2) => n.toFixed(digits);
const load = () => `load ${f(loadavg()[0] ?? 0)} on ${cpus().length} cores`;
const ROOT = fileURLToPath(new URL('../', import.meta.url));

function serviceEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of values.env.split(',').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const prof = values['cpu-prof-dir'];
  if (prof !== undefined) env['NODE_OPTIONS'] = `--cpu-prof --cpu-prof-dir=${prof}`;
  return env;
}

/** The services `--floor` stops: every one but the gateway. */
const FLOOR_STOPPED: ReadonlySet<string> = new Set(SERVICE_NAMES.filter((name) => name !== 'gateway'));

/** Every process of the system and this one (without the services `--floor` stopped). */
function processes(system: TestSystem, extra: readonly NamedProcess[]): NamedProcess[] {
  const running = system.system.processes().filter((p) => FLOOR === undefined || !FLOOR_STOPPED.has(p.name));
  return [...running, ...extra, { name: 'load generator', pid: process.pid }];
}

/** `--floor`: stops every service but the gateway and starts the floor executor in their place. */
async function startFloor(system: TestSystem, mode: string): Promise<ChildProcess> {
  for (const name of SERVICE_NAMES) if (FLOOR_STOPPED.has(name)) await system.system.killService(name);
  const child = spawn(process.execPath, [...NODE_FLAGS, 'services/run-executor/bench/floor-executor.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...serviceEnv(), NATS_URL: system.natsUrl, FLOOR_MODE: mode },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout! })) if (line === 'FLOOR_EXECUTOR_READY') break;
  child.stdout!.resume();
  return child;
}

function summary(values: number[]): string {
  values.sort((a, b) => a - b);
  return `p50 ${f(quantile(values, 0.5))} ms  p99 ${f(quantile(values, 0.99))} ms  max ${f(values.at(-1) ?? NaN)} ms  (n=${values.length})`;
}

async function newClient(system: TestSystem, mode: WaitMode, types: readonly string[]): Promise<RunClient> {
  return openRunClient(system.client(), { session: `bench-${randomUUID().slice(0, 8)}`, types, mode });
}

/**
 * The warm-up of a one-client phase, as long as the throughput phase's
 * (--warmup ms) and at least 20 rounds: true while the round just done
 * is still warming up. A shorter one (20–30 rounds, under a second) measured
 * the services' code before the JIT had compiled it: p50 3.0 ms against
 * 1.9 ms once warm (bench/HISTORY.md, eighth pass).
 */
function warmUp(): () => boolean {
  const until = performance.now() + WARMUP_MS;
  let rounds = 0;
  return () => {
    rounds += 1;
    return rounds <= 20 || performance.now() < until;
  };
}

/** 1. start → task.spawned (SSE) and start → reply, one client, runs one after another. */
async function latencyPhase(system: TestSystem, mode: WaitMode): Promise<void> {
  const client = await newClient(system, mode, ['task.spawned', ...TERMINAL_TYPES]);
  const reply: number[] = [];
  const spawned: number[] = [];
  const ended: number[] = [];
  const warming = warmUp();
  while (reply.length < SAMPLES) {
    const t0 = performance.now();
    const taskId = await client.start(QUERY);
    const t1 = performance.now();
    const seen = mode === 'sse' ? await client.next(taskId, ['task.spawned']) : Number.NaN;
    await client.terminal(taskId);
    const t2 = performance.now();
    if (warming()) continue;
    reply.push(t1 - t0);
    spawned.push(seen - t0);
    ended.push(t2 - t0);
  }
  client.close();
  print(`start → reply                 ${summary(reply)}`);
  if (mode === 'sse') print(`start → task.spawned on SSE   ${summary(spawned)}`);
  else print('start → task.spawned on SSE   not measured: GET /v1/events is not served');
  print(`start → terminal event        ${summary(ended)}`);
}

interface Window {
  readonly from: number;
  readonly until: number;
}

/** Runs that ended so far (read while the clients run). */
interface Outcome {
  completed: number;
  failed: number;
  errors: number;
}

/** Closed-loop clients until `until`; counts runs that ended inside `window` (into `outcome`, live). */
async function drive(
  clients: readonly RunClient[],
  window: Window,
  outcome: Outcome = { completed: 0, failed: 0, errors: 0 },
) {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < window.until) {
        const t0 = performance.now();
        try {
          const taskId = await client.start(QUERY);
          const end = await client.terminal(taskId);
          const t1 = performance.now();
          if (t1 < window.from || t1 > window.until) continue;
          latencies.push(t1 - t0);
          if (end.type === 'task.completed') outcome.completed += 1;
          else {
            outcome.failed += 1;
            const key = `${end.type} ${end.errorCode ?? ''}`.trim();
            failures.set(key, (failures.get(key) ?? 0) + 1);
          }
        } catch (error) {
          outcome.errors += 1;
          if (outcome.errors <= 3) print(`  error: ${(error as Error).message}`);
        }
      }
    }),
  );
  if (failures.size > 0) print(`  not completed: ${[...failures].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  return { latencies, ...outcome };
}

async function openClients(system: TestSystem, mode: WaitMode): Promise<RunClient[]> {
  return Promise.all(Array.from({ length: CLIENTS }, () => newClient(system, mode, TERMINAL_TYPES)));
}

/** 2. runs/s with `--clients` closed-loop clients; CPU ms per run of each process. */
async function throughputPhase(system: TestSystem, mode: WaitMode, extra: readonly NamedProcess[]): Promise<void> {
  const clients = await openClients(system, mode);
  const from = performance.now() + WARMUP_MS;
  const window = { from, until: from + DURATION_MS };
  const procs = processes(system, extra);
  let before = new Map<string, number>();
  let messagesBefore: Promise<Map<string, MessageCounts>> | undefined;
  const snap = setTimeout(() => {
    before = cpuSnapshot(procs);
    if (NATS_STATS) messagesBefore = connectionCounts(MONITOR_PORT);
  }, WARMUP_MS);
  const result = await drive(clients, window);
  clearTimeout(snap);
  const used = cpuSince(procs, before);
  const messages =
    messagesBefore === undefined ? undefined : countsSince(await messagesBefore, await connectionCounts(MONITOR_PORT));
  for (const c of clients) c.close();
  const seconds = DURATION_MS / 1000;
  const runs = result.completed + result.failed;
  print(
    `runs/s ${f(runs / seconds, 1).padStart(7)}  (completed ${result.completed}, failed ${result.failed}, ` +
      `errors ${result.errors}; start → terminal ${summary(result.latencies)})`,
  );
  const cpu = [...used.entries()].map(([name, s]) => `${name} ${f((s * 1000) / Math.max(1, runs))}`);
  print(`  CPU ms per run: ${cpu.join(', ')}`);
  const total = [...used.values()].reduce((a, b) => a + b, 0);
  print(`  CPU total ${f(total / seconds)} cores of ${cpus().length}; ${load()}`);
  if (messages !== undefined) printMessages(messages, runs);
}

/** NATS messages per run of each service's connections: published / delivered to it, and their bytes. */
function printMessages(messages: ReadonlyMap<string, MessageCounts>, runs: number): void {
  const per = (n: number) => f(n / Math.max(1, runs), 1);
  const rows = [...messages.entries()]
    .filter(([, c]) => c.sent + c.delivered > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([name, c]) => `${name} ${per(c.sent)} / ${per(c.delivered)} (${per(c.sentBytes)} / ${per(c.deliveredBytes)} B)`,
    );
  print(`  NATS messages per run, published / delivered (bytes): ${rows.join(', ')}`);
}

/**
 * 3. inject_context → control.applied on SSE, one client, on a run waiting
 * in a tool. The warm-up injects into a run of its own: each injection
 * grows its run's context, so the measured run starts with an empty one.
 */
async function controlPhase(system: TestSystem, mode: WaitMode): Promise<void> {
  if (mode !== 'sse') {
    print('control → control.applied     not measured: GET /v1/events is not served');
    return;
  }
  const client = await newClient(system, mode, ['tool.invoked', 'control.applied', ...TERMINAL_TYPES]);
  const api: ArsClient = system.client({ session: client.session });
  const reply: number[] = [];
  const applied: number[] = [];
  /** Injects into a fresh run: for the warm-up's time, or until `SAMPLES` are recorded. */
  const injectInto = async (record: boolean): Promise<void> => {
    const warming = record ? undefined : warmUp();
    const taskId = await client.start('#script tool:wait{ms:600000};finish:done');
    await client.next(taskId, ['tool.invoked']);
    for (let i = 0; record ? reply.length < SAMPLES : i === 0 || warming?.() === true; i++) {
      const t0 = performance.now();
      await api.call('inject_context', { identity: { run: taskId }, payload: { note: `n${i}` } });
      const t1 = performance.now();
      const seen = await client.next(taskId, ['control.applied']);
      if (!record) continue;
      reply.push(t1 - t0);
      applied.push(seen - t0);
    }
    await api.call('cancel', { identity: { run: taskId }, payload: { hard: true } });
    await client.terminal(taskId);
  };
  await injectInto(false);
  await injectInto(true);
  client.close();
  print(`control → reply               ${summary(reply)}`);
  print(`control → control.applied     ${summary(applied)}`);
}

interface Sample {
  readonly t: number;
  readonly runs: number;
  readonly rss: Map<string, number>;
  readonly cpu: Map<string, number>;
}

/** Runs/s and CPU ms per run of each process between two samples. */
function between(a: Sample, b: Sample): string {
  const runs = b.runs - a.runs;
  const cpu = [...b.cpu.entries()]
    .map(([name, s]) => [name, ((s - (a.cpu.get(name) ?? NaN)) * 1000) / Math.max(1, runs)] as const)
    .filter(([, ms]) => ms >= 0.05)
    .map(([name, ms]) => `${name} ${f(ms)}`);
  return `runs/s ${f(runs / (b.t - a.t), 1)}; CPU ms/run ${cpu.join(', ')}`;
}

/** 4. RSS of every process over a sustained run: warm value, end value, drift, slope; CPU per run early and late. */
async function rssPhase(system: TestSystem, mode: WaitMode, extra: readonly NamedProcess[]): Promise<void> {
  const clients = await openClients(system, mode);
  const procs = processes(system, extra);
  const started = performance.now();
  const window = { from: started, until: started + SUSTAIN_S * 1000 };
  const outcome: Outcome = { completed: 0, failed: 0, errors: 0 };
  const samples: Sample[] = [];
  const sample = () =>
    samples.push({
      t: (performance.now() - started) / 1000,
      runs: outcome.completed + outcome.failed,
      rss: new Map(procs.map((p) => [p.name, rssBytes(p.pid)])),
      cpu: cpuSnapshot(procs),
    });
  sample();
  const timer = setInterval(sample, SAMPLE_EVERY_S * 1000);
  await drive(clients, window, outcome);
  clearInterval(timer);
  sample();
  for (const c of clients) c.close();
  // Warm: JIT, caches, buffers and heaps have grown to their working size, and
  // the bus's fixed windows have filled (duplicate ids: 2 minutes; released
  // lease markers: the leases bucket's 5-minute age limit), by --warm-after.
  const warmFrom = WARM_AFTER_S;
  const warm = samples.filter((s) => s.t >= warmFrom);
  const runs = outcome.completed + outcome.failed;
  print(
    `sustained ${SUSTAIN_S} s: ${runs} runs, runs/s ${f(runs / SUSTAIN_S, 1)} (failed ${outcome.failed}, errors ${outcome.errors}); ` +
      `warm from ${f(warmFrom, 0)} s; ${load()}`,
  );
  const third = Math.max(1, Math.floor(warm.length / 3));
  const [w0, w1, w2, w3] = [warm[0], warm[third], warm.at(-1 - third), warm.at(-1)];
  if (w0 && w1 && w2 && w3) {
    print(`  first third after warm-up: ${between(w0, w1)}`);
    print(`  last third:                ${between(w2, w3)}`);
  }
  print(
    `  ${'process'.padEnd(16)} ${'start'.padStart(8)} ${'warm'.padStart(8)} ${'max'.padStart(8)} ${'end'.padStart(8)}  drift   widest  slope`,
  );
  for (const p of procs) {
    const series = warm.map((s) => ({ t: s.t, v: s.rss.get(p.name) ?? NaN }));
    const first = series[0]?.v ?? NaN;
    const last = series.at(-1)?.v ?? NaN;
    const max = Math.max(...series.map((s) => s.v));
    const slope = slopePerMinute(series);
    // The sample farthest from the warm value, either way: "flat within 10%" holds when this stays within ±10%.
    const widest = series.reduce((w, s) => (Math.abs(s.v - first) > Math.abs(w - first) ? s.v : w), first);
    print(
      `  ${p.name.padEnd(16)} ${mib(samples[0]?.rss.get(p.name) ?? NaN).padStart(8)} ${mib(first).padStart(8)} ` +
        `${mib(max).padStart(8)} ${mib(last).padStart(8)}  ${f(((last - first) / first) * 100, 1).padStart(5)}%  ` +
        `${f(((widest - first) / first) * 100, 1).padStart(5)}%  ${mib(slope)} MiB/min`,
    );
  }
  if (values['rss-series']) {
    print(`  RSS (MiB) every ${SAMPLE_EVERY_S} s from the start:`);
    for (const p of procs)
      print(`  ${p.name.padEnd(16)} ${samples.map((s) => mib(s.rss.get(p.name) ?? NaN)).join(' ')}`);
  }
}

/** Least-squares slope of `v` over `t` (seconds), per minute. */
function slopePerMinute(series: readonly { t: number; v: number }[]): number {
  const n = series.length;
  if (n < 2) return NaN;
  const mt = series.reduce((a, s) => a + s.t, 0) / n;
  const mv = series.reduce((a, s) => a + s.v, 0) / n;
  const num = series.reduce((a, s) => a + (s.t - mt) * (s.v - mv), 0);
  const den = series.reduce((a, s) => a + (s.t - mt) ** 2, 0);
  return (num / den) * 60;
}

/**
 * Where the services keep their data, as the bench line prints it. Several
 * executors need a store several processes can share: MongoDB, or the
 * embedded store's sqlite engine (`--env STORE_ENGINE=sqlite`).
 */
function storeKind(): { label: string; shared: boolean } {
  if (MONGO_URL !== undefined) return { label: 'mongodb', shared: true };
  // The services' default engine is sqlite (libs/service-kit's config).
  const engine = serviceEnv()['STORE_ENGINE'] ?? process.env['STORE_ENGINE'] ?? 'sqlite';
  return { label: `embedded (${engine})`, shared: engine === 'sqlite' };
}

/** A second run-executor beside the supervisor's, on the same store (see {@link storeKind}). */
async function startExtraExecutor(system: TestSystem): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...NODE_FLAGS, 'services/run-executor/src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...serviceEnv(),
      NATS_URL: system.natsUrl,
      DATA_DIR: system.dataDir,
      MONGO_URL: MONGO_URL ?? '',
      INSTANCE_ID: `run-executor-${randomUUID().slice(0, 8)}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // Ready once its replica answers on the bus: give it the time the supervisor would.
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  return child;
}

/** Stops an extra run-executor (SIGTERM: it drains) and waits for it to exit. */
async function stopExtraExecutor(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

async function main(): Promise<void> {
  const system = await startTestSystem({
    ...(MONGO_URL === undefined ? {} : { mongoUrl: MONGO_URL }),
    env: serviceEnv(),
    nodeFlags: NODE_FLAGS,
    ...(NATS_MEMORY_LIMIT === undefined ? {} : { natsMemoryLimitMiB: NATS_MEMORY_LIMIT }),
    ...(NATS_STATS ? { natsMonitorPort: MONITOR_PORT } : {}),
  });
  const extras: ChildProcess[] = [];
  try {
    if (FLOOR !== undefined) extras.push(await startFloor(system, FLOOR));
    const floorProcess = extras.map((c) => ({ name: `floor executor (${FLOOR})`, pid: c.pid ?? 0 }));
    const probe = system.client();
    const mode: WaitMode = (await sseAvailable(probe, `bench-probe-${randomUUID().slice(0, 8)}`)) ? 'sse' : 'poll';
    print(
      `runs benchmark: node ${process.version}, ${load()}, store ${storeKind().label}, ` +
        `terminal events ${mode === 'sse' ? 'on SSE' : 'by polling tasks.get (GET /v1/events not served)'}`,
    );
    print(`query: ${QUERY}`);
    if (FLOOR !== undefined) print(`floor (${FLOOR}): every service but the gateway stopped; the floor executor runs`);
    if (PHASES.has('latency')) await latencyPhase(system, mode);
    if (PHASES.has('control')) await controlPhase(system, mode);
    for (const executors of EXECUTORS) {
      if (executors > 1 && !storeKind().shared) {
        print(
          `executors ${executors}: skipped (several executors need --mongo-url or --env STORE_ENGINE=sqlite; ` +
            `the nedb engine serves one process per data directory)`,
        );
        continue;
      }
      if (FLOOR !== undefined && executors > 1) throw new Error('--floor measures one executor');
      while (FLOOR === undefined && extras.length < executors - 1) extras.push(await startExtraExecutor(system));
      // Fewer than the phase before (`--executors 2,1`): the extra ones stop, so that each phase has what it says.
      while (FLOOR === undefined && extras.length > executors - 1) await stopExtraExecutor(extras.pop()!);
      const extra =
        FLOOR !== undefined ? floorProcess : extras.map((c, i) => ({ name: `run-executor#${i + 2}`, pid: c.pid ?? 0 }));
      if (PHASES.has('throughput')) {
        print(`executors ${executors}, clients ${CLIENTS}, ${DURATION_MS} ms after ${WARMUP_MS} ms warm-up:`);
        await throughputPhase(system, mode, extra);
      }
      if (PHASES.has('rss')) await rssPhase(system, mode, extra);
    }
  } finally {
    for (const child of extras) await stopExtraExecutor(child);
    await system.stop();
  }
}

await main();
