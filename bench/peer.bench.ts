/**
 * Benchmark (issue 29): this system beside the peer (LangGraph.js Agent
 * Server, dev mode; recipe in shared/peer-langgraph), measured in one run,
 * alternated in the order `--order` gives, each system started fresh.
 *
 * - peer: installed by the recipe's setup.sh into $PEER_DIR (reused while
 *   it matches the recipe), started by start.sh, measured by its own
 *   bench.mjs (phases `--peer-phases`: a = create thread + run, sequential;
 *   c3 = 16 clients, runs/stream, closing on the final event; b2 and c2
 *   optional), stopped by stop.sh. RSS of its whole tree (CLI → tsx watch →
 *   server → esbuild) idle and after the phases; CPU per c3 run from the
 *   tree's /proc times in bench.mjs's snapshots.
 * - one, split: this system as `ars up` starts it (`libs/cli/src/main.ts up`,
 *   ARS_UP_MODE one-process or split, a free port on 127.0.0.1, a temporary
 *   DATA_DIR), so that this process is the load generator alone. The tree is
 *   nats-server and the services (one process, or seven); `ars up`'s
 *   supervisor process (a deployment has none) is left out of the tree's
 *   figures and reported on rows of its own (alone, and tree + supervisor).
 *   Phases: idle RSS after `--settle` s; `--starts` sequential starts, each
 *   in a fresh session whose SSE stream is open first (start request
 *   latency, start → task.spawned; a run is not awaited before the next
 *   start, as in the peer's phase a); `--clients` closed-loop clients each
 *   starting a 3-step scripted run and waiting for its terminal event on SSE
 *   (runs/s and CPU ms per run of the tree, after a `--warmup` ms warm-up);
 *   RSS after; optionally a soak until the system has ended `--runs` runs
 *   and a sustained run of `--sustain` s (widest RSS drift once warm, from
 *   a fifth of the run).
 * - floor (`--floor events|queue`, or `floor` in the order): split mode
 *   (`startTestSystem` in a supervisor process of its own) with every service
 *   but the gateway replaced by the floor executor (runs.bench.ts
 *   `--floor`); throughput only, for the runs/s ÷ floor row, which flags a
 *   regression under 60% of the floor.
 *
 * `--quick`: tiny counts (20 starts, 3 s phases, 0.5 s warm-up) to check
 * that everything works, not to measure.
 *
 * `--ars-node-flags='FLAGS'` (with the =: the flags start with a dash): Node.js flags of `ars up`'s process instead of
 * `ARS_NODE_FLAGS` (heap settings of the one process, e.g. `--max-old-space-size=1024
 * --max-semi-space-size=32 --no-memory-reducer-favors-memory`); split mode's services keep theirs.
 *
 * `--starts-alone N`: N more starts, each run ended before the next, so that
 * the start's own path (nothing else in flight) can be told from the time it
 * waits behind the previous runs' work in the same event loop (a diagnostic
 * row; the figure against the peer stays the one with runs in the background).
 *
 *   node bench/peer.bench.ts [--order peer,one,split] [--quick] [--starts 200] [--starts-alone 0] [--warmup 5000]
 *     [--clients 16] [--duration 20] [--settle 5] [--runs 0] [--soak-max 1800] [--sustain 0]
 *     [--sample-every 10] [--floor events|queue] [--peer-phases a,c3] [--peer-joins 100]
 *     [--peer-warmup 5] [--peer-dir DIR] [--peer-recipe DIR] [--peer-env K=V,…] [--env K=V,…]
 *     [--ars-node-flags='FLAGS'] [--query Q] [--out results.json]
 *
 * Exits 1 only when a measurement broke down (a system that does not start,
 * a phase that errs), never on a missed target.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensurePeer } from './src/peer/langgraph-peer.ts';
import type { PeerSettings } from './src/peer/langgraph-peer.ts';
import { measureArs, measurePeer } from './src/peer/measure.ts';
import type { ArsPlan, PeerPlan } from './src/peer/measure.ts';
import { flags, formatTable, tableRows } from './src/peer/report.ts';
import type { Kind, Measurement } from './src/peer/report.ts';

const { values } = parseArgs({
  options: {
    order: { type: 'string', default: 'peer,one,split' },
    quick: { type: 'boolean', default: false },
    starts: { type: 'string' },
    'starts-alone': { type: 'string' },
    warmup: { type: 'string' },
    clients: { type: 'string', default: '16' },
    duration: { type: 'string' },
    settle: { type: 'string' },
    runs: { type: 'string', default: '0' },
    'soak-max': { type: 'string', default: '1800' },
    sustain: { type: 'string', default: '0' },
    'sample-every': { type: 'string', default: '10' },
    floor: { type: 'string' },
    'peer-phases': { type: 'string', default: 'a,c3' },
    'peer-joins': { type: 'string' },
    'peer-warmup': { type: 'string' },
    'peer-dir': { type: 'string' },
    'peer-recipe': { type: 'string' },
    'peer-env': { type: 'string', default: '' },
    env: { type: 'string', default: '' },
    'ars-node-flags': { type: 'string' },
    query: { type: 'string', default: '#script tool:echo{"a":1};tool:echo{"b":2};finish:done' },
    out: { type: 'string' },
  },
});

const QUICK = values.quick;
/** A number option: its value, else the quick or the full default. */
const num = (value: string | undefined, full: number, quick = full): number => {
  const n = value === undefined ? (QUICK ? quick : full) : Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`not a number: ${value}`);
  return n;
};
const pairs = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(',')
      .filter((p) => p.includes('='))
      .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
  );

const FLOOR = values.floor ?? 'events';
if (FLOOR !== 'events' && FLOOR !== 'queue') throw new Error('--floor takes events or queue');
const KINDS: readonly Kind[] = ['peer', 'one', 'split', 'floor'];
const ORDER = values.order.split(',').filter((k) => k !== '') as Kind[];
for (const kind of ORDER)
  if (!KINDS.includes(kind)) throw new Error(`--order: ${kind} is not one of ${KINDS.join(', ')}`);
if (values.floor !== undefined && !ORDER.includes('floor')) ORDER.push('floor');

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SETTLE_S = num(values.settle, 5, 1);
const ARS: ArsPlan = {
  settleS: SETTLE_S,
  starts: num(values.starts, 200, 20),
  startsAlone: num(values['starts-alone'], 0, 0),
  warmupMs: num(values.warmup, 5_000, 500),
  clients: num(values.clients, 16),
  durationMs: num(values.duration, 20, 3) * 1000,
  runs: num(values.runs, 0),
  soakMaxMs: num(values['soak-max'], 1800) * 1000,
  sustainS: num(values.sustain, 0),
  sampleEveryS: num(values['sample-every'], 10),
  query: values.query,
  floor: FLOOR,
  env: pairs(values.env),
  ...(values['ars-node-flags'] === undefined
    ? {}
    : { nodeFlags: values['ars-node-flags'].split(' ').filter((flag) => flag !== '') }),
};
const PEER_SETTINGS: PeerSettings = {
  recipeDir: values['peer-recipe'] ?? join(ROOT, '..', 'shared', 'peer-langgraph'),
  peerDir: values['peer-dir'] ?? process.env['PEER_DIR'] ?? join(homedir(), '.cache', 'ars-peer'),
  env: pairs(values['peer-env']),
};
const WORK = mkdtempSync(join(tmpdir(), 'ars-peer-bench-'));
const PEER: PeerPlan = {
  settings: PEER_SETTINGS,
  settleS: SETTLE_S,
  knobs: {
    phases: values['peer-phases'],
    creates: ARS.starts,
    joins: num(values['peer-joins'], 100, 5),
    clients: ARS.clients,
    durationS: ARS.durationMs / 1000,
    warmupRuns: num(values['peer-warmup'], 5, 1),
  },
  outFor: (index) => join(WORK, `peer-${index}.json`),
};

const print = (line: string) => process.stdout.write(`${line}\n`);
const load1 = () => loadavg()[0] ?? Number.NaN;
const LABEL: Record<Kind, string> = { peer: 'peer', one: 'one-process', split: 'split', floor: `floor (${FLOOR})` };

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} + uncommitted changes` : head;
  } catch {
    return 'unknown';
  }
}

/** bench.mjs's JSON files (each copied into the --out report as `raw`); removed at exit. */
process.on('exit', () => rmSync(WORK, { recursive: true, force: true }));

/** What to stop if this process is interrupted: the system or peer being measured. */
const running = new Set<() => Promise<void>>();
const track = (stop: () => Promise<void>) => {
  running.add(stop);
  return () => void running.delete(stop);
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    print(`\n${signal}: stopping what is running`);
    void Promise.allSettled([...running].map((stop) => stop())).then(() => process.exit(130));
  });
}

/** The longest one measurement may take, in seconds, its phases' own bounds plus start, stop and slack. */
const ARS_BUDGET_S =
  600 +
  ARS.starts +
  (ARS.startsAlone ?? 0) +
  (2 * ARS.warmupMs + ARS.durationMs) / 1000 +
  (ARS.runs > 0 ? ARS.soakMaxMs / 1000 : 0) +
  ARS.sustainS;
const PEER_BUDGET_S =
  600 + 2 * (PEER.knobs.creates + PEER.knobs.joins + PEER.knobs.warmupRuns) + 3 * PEER.knobs.durationS;

/**
 * Bounds a measurement in time: past `seconds`, whatever is running is
 * stopped (which fails the requests in flight) and the measurement fails.
 */
async function withinBudget(work: Promise<void>, seconds: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      void Promise.allSettled([...running].map((stop) => stop()));
      reject(new Error(`the measurement took longer than ${seconds.toFixed(0)} s: stopped`));
    }, seconds * 1000);
  });
  work.catch(() => undefined);
  try {
    await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why the peer is not measured (no npm registry, for one), or undefined once it is installed. */
let peerUnavailable: Promise<string | undefined> | undefined;

async function measure(m: Measurement): Promise<void> {
  if (m.kind === 'peer') {
    peerUnavailable ??= ensurePeer(PEER_SETTINGS);
    const why = await peerUnavailable;
    if (why !== undefined) {
      m.notes.push(`skipped: ${why}`);
      print(`  PEER SKIPPED: it could not be set up in ${PEER_SETTINGS.peerDir} (${why})`);
      return;
    }
    await withinBudget(measurePeer(PEER, m, print, track), PEER_BUDGET_S);
    return;
  }
  await withinBudget(measureArs(ARS, m, print, track), ARS_BUDGET_S);
}

async function main(): Promise<number> {
  const started = new Date();
  print(
    `peer benchmark: ${started.toISOString()}, commit ${commit()}, node ${process.version}, load ${load1().toFixed(2)} on ${cpus().length} cores`,
  );
  print(
    `order ${ORDER.map((k) => LABEL[k]).join(', ')}; starts ${ARS.starts}, clients ${ARS.clients}, ${ARS.durationMs / 1000} s after ${ARS.warmupMs} ms warm-up; ` +
      `peer phases ${PEER.knobs.phases}; query ${ARS.query}` +
      (ARS.nodeFlags === undefined ? '' : `; ars up's node flags ${ARS.nodeFlags.join(' ')}`),
  );
  const measurements: Measurement[] = [];
  for (const [index, kind] of ORDER.entries()) {
    const m: Measurement = { kind, index, load: [load1()], figures: {}, notes: [] };
    measurements.push(m);
    print(`\n[${index + 1}/${ORDER.length}] ${LABEL[kind]} (load ${load1().toFixed(2)})`);
    try {
      await measure(m);
    } catch (error) {
      m.error = error instanceof Error ? error.message : String(error);
      print(`  MALFUNCTION: ${m.error}`);
    }
    m.load.push(load1());
  }
  const soakRuns = measurements.map((m) => m.figures.soakRuns).find((n) => n !== undefined);
  const rows = tableRows(measurements, soakRuns);
  print(`\n${formatTable(rows)}`);
  print(
    `\nload average (1 min) per measurement: ${measurements.map((m) => `${LABEL[m.kind]} ${m.load.map((l) => l.toFixed(2)).join('→')}`).join('; ')}; ` +
      `now ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} on ${cpus().length} cores`,
  );
  print('MB are MiB. Tree: nats-server and the services (this system), CLI → tsx watch → server → esbuild (peer).');
  print(
    "Peer's start → first event is its phase b2 (background run, then join); not measured unless b2 is in --peer-phases.",
  );
  for (const m of measurements) for (const note of m.notes) print(`note (${LABEL[m.kind]} #${m.index + 1}): ${note}`);
  for (const flag of flags(measurements)) print(flag);
  const broken = measurements.filter((m) => m.error !== undefined);
  if (values.out !== undefined) {
    const options = { ars: ARS, peer: { ...PEER.knobs, settings: PEER_SETTINGS }, order: ORDER, quick: QUICK };
    const report = {
      date: started.toISOString(),
      commit: commit(),
      node: process.version,
      cores: cpus().length,
      options,
      measurements,
      table: rows,
    };
    writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
    print(`wrote ${values.out}`);
  }
  if (broken.length > 0) print(`${broken.length} measurement(s) broke down: exit 1`);
  return broken.length > 0 ? 1 : 0;
}

process.exit(await main());
