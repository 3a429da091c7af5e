/**
 * The peer (issue 29): LangGraph.js Agent Server in dev mode, from the
 * recipe in `shared/peer-langgraph` (its README has the versions and
 * caveats). Installed once into `$PEER_DIR` by the recipe's `setup.sh`
 * (npm registry only) and reused while its files match the recipe's; started
 * and stopped by its `start.sh` / `stop.sh`; measured by its own `bench.mjs`,
 * whose JSON this module reads. Everything on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeTree, sampleTree, toMiB, treeRss } from './proc-tree.ts';

/** Where the recipe and the install are, and what the peer's processes see. */
export interface PeerSettings {
  /** The recipe: setup.sh, start.sh, stop.sh, bench.mjs, graph.ts. */
  readonly recipeDir: string;
  /** The install (`$PEER_DIR`). */
  readonly peerDir: string;
  /** Environment of start.sh and bench.mjs on top of this process's (PATH, LOG_LEVEL, N_JOBS, ...). */
  readonly env: Record<string, string>;
}

/** A running peer. */
export interface RunningPeer {
  readonly url: string;
  /** The CLI's pid (`server.pid`): the root of the peer's process tree. */
  readonly pid: number;
  /** The Node.js version start.sh reported. */
  readonly node: string;
}

/** bench.mjs's knobs (its environment). */
export interface PeerBenchKnobs {
  /** Its phases, e.g. `a,c3` or `a,b2,c2,c3`. */
  readonly phases: string;
  /** Sequential creates of phase a (N_CREATE). */
  readonly creates: number;
  /** Sequential joins of phase b2 (N_JOIN). */
  readonly joins: number;
  /** Clients of phases c, c2, c3 (CONC). */
  readonly clients: number;
  /** Seconds of each of phases c, c2, c3 (DURATION_S). */
  readonly durationS: number;
  /** Warm-up runs/stream before the phases (WARMUP). */
  readonly warmupRuns: number;
}

interface BenchProcess {
  readonly role: string;
  readonly rss_mb: number;
  readonly cpu_s: number;
}

interface BenchSnapshot {
  readonly tree_rss_mb: number;
  readonly server_rss_mb: number | null;
  readonly procs: readonly BenchProcess[];
}

interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

/** The parts of bench.mjs's JSON this benchmark reads. */
export interface PeerBenchResult {
  readonly server_info?: { readonly version?: string };
  readonly a?: { readonly create_thread_plus_run_ms?: Summary; readonly error?: string };
  readonly b2?: { readonly first_event_ms?: Summary; readonly bad_runs?: number; readonly error?: string };
  readonly c2?: {
    readonly runs_per_s?: number;
    readonly runs_ok?: number;
    readonly runs_failed?: number;
    readonly error?: string;
  };
  readonly c3?: {
    readonly runs_per_s?: number;
    readonly runs_ok?: number;
    readonly runs_failed?: number;
    readonly per_run_to_final_event_ms?: Summary;
    readonly error?: string;
  };
  readonly rss: Record<string, BenchSnapshot>;
}

/** Runs a script to its end (bounded by `timeoutMs`); resolves with its exit code and output. */
function run(
  command: string,
  args: readonly string[],
  options: {
    readonly cwd: string;
    readonly env: NodeJS.ProcessEnv;
    readonly timeoutMs: number;
    readonly onLine?: (line: string) => void;
  },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let partial = '';
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      if (options.onLine === undefined) return;
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function scriptEnv(settings: PeerSettings, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...settings.env, ...extra, PEER_DIR: settings.peerDir };
}

// Not package-lock.json: npm install rewrites the copy (other platforms' optional binaries).
const RECIPE_FILES = ['graph.ts', 'langgraph.json', 'package.json'] as const;

/** Whether `$PEER_DIR` holds an install of this recipe (same graph, config and pinned versions). */
export function installed(settings: PeerSettings): boolean {
  if (!existsSync(join(settings.peerDir, 'node_modules', '.bin', 'langgraphjs'))) return false;
  return RECIPE_FILES.every((file) => {
    const theirs = join(settings.peerDir, file);
    return existsSync(theirs) && readFileSync(theirs, 'utf8') === readFileSync(join(settings.recipeDir, file), 'utf8');
  });
}

/**
 * Installs the peer with the recipe's setup.sh unless an install of this
 * recipe is there. Resolves with undefined when it is ready, else why not
 * (no npm registry, for one).
 */
export async function ensurePeer(settings: PeerSettings): Promise<string | undefined> {
  if (installed(settings)) return undefined;
  const result = await run(join(settings.recipeDir, 'setup.sh'), [], {
    cwd: settings.recipeDir,
    env: scriptEnv(settings),
    timeoutMs: 10 * 60_000,
  }).catch((error: unknown) => ({ code: -1, output: String(error) }));
  if (result.code === 0 && installed(settings)) return undefined;
  const tail = result.output.trim().split('\n').slice(-6).join(' | ');
  return `setup.sh failed (exit ${result.code}): ${tail}`;
}

/** Starts the peer with start.sh (a fresh, empty state each time). */
export async function startPeer(settings: PeerSettings): Promise<RunningPeer> {
  const result = await run(join(settings.recipeDir, 'start.sh'), [], {
    cwd: settings.peerDir,
    env: scriptEnv(settings),
    timeoutMs: 120_000,
  });
  const match = /^up: (http:\/\/127\.0\.0\.1:\d+) pid (\d+) node (\S+)/m.exec(result.output);
  if (result.code !== 0 || match === null) throw new Error(`the peer's start.sh failed: ${result.output.trim()}`);
  return { url: match[1]!, pid: Number(match[2]), node: match[3]! };
}

/** Stops the peer with stop.sh (its own process group only). */
export async function stopPeer(settings: PeerSettings): Promise<void> {
  await run(join(settings.recipeDir, 'stop.sh'), [], {
    cwd: settings.peerDir,
    env: scriptEnv(settings),
    timeoutMs: 30_000,
  });
}

/** Runs the recipe's bench.mjs against `peer` with `knobs`; its JSON result. */
export async function runPeerBench(
  settings: PeerSettings,
  peer: RunningPeer,
  knobs: PeerBenchKnobs,
  out: string,
  onLine: (line: string) => void,
): Promise<PeerBenchResult> {
  // bench.mjs stops itself after MAX_TOTAL_S; this process waits a minute longer.
  const maxTotalS = 120 + knobs.creates * 2 + knobs.joins * 2 + knobs.durationS * 3 + knobs.warmupRuns * 2;
  const result = await run(
    process.execPath,
    [join(settings.recipeDir, 'bench.mjs'), '--url', peer.url, '--pid', String(peer.pid), '--out', out],
    {
      cwd: settings.peerDir,
      env: scriptEnv(settings, {
        PHASES: knobs.phases,
        N_CREATE: String(knobs.creates),
        N_JOIN: String(knobs.joins),
        CONC: String(knobs.clients),
        DURATION_S: String(knobs.durationS),
        WARMUP: String(knobs.warmupRuns),
        IDLE_S: '0',
        MAX_TOTAL_S: String(maxTotalS),
      }),
      timeoutMs: (maxTotalS + 60) * 1000,
      onLine,
    },
  );
  if (result.code !== 0)
    throw new Error(
      `the peer's bench.mjs exited ${result.code}: ${result.output.trim().split('\n').slice(-5).join(' | ')}`,
    );
  return JSON.parse(await readFile(out, 'utf8')) as PeerBenchResult;
}

/** Resident MiB of the peer's whole tree now, and each process's. */
export function peerRss(peer: RunningPeer): { treeMiB: number; processes: string } {
  const sample = sampleTree(peer.pid);
  return { treeMiB: toMiB(treeRss(sample)), processes: describeTree(sample) };
}

/** CPU seconds of a bench.mjs snapshot's whole tree. */
export function snapshotCpu(snapshot: BenchSnapshot): number {
  return snapshot.procs.reduce((sum, p) => sum + p.cpu_s, 0);
}

/** bench.mjs's snapshots in the order it takes them. */
const SNAPSHOT_ORDER = ['after_warmup', 'after_a', 'after_b', 'after_b2', 'after_c', 'after_c2', 'after_c3'] as const;

/** The snapshot bench.mjs took just before phase `phase` ran (after the previous phase it ran). */
export function snapshotBefore(result: PeerBenchResult, phase: string): BenchSnapshot | undefined {
  const index = SNAPSHOT_ORDER.indexOf(`after_${phase}` as (typeof SNAPSHOT_ORDER)[number]);
  for (let i = index - 1; i >= 0; i--) {
    const snapshot = result.rss[SNAPSHOT_ORDER[i]!];
    if (snapshot !== undefined) return snapshot;
  }
  return undefined;
}
