/**
 * One measurement of one system, filling a {@link Measurement}: the peer
 * through its own bench.mjs, or this system (one-process, split, or the
 * floor of its message flow) through the load of `ars-load.ts`. Each
 * starts the system fresh and stops it at the end, whatever happens.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sseAvailable } from '../run-driver.ts';
import { soakPhase, startLatencyPhase, sustainPhase, throughputPhase } from './ars-load.ts';
import type { Outcome } from './ars-load.ts';
import { startArsSystem } from './ars-system.ts';
import type { ArsSystem } from './ars-system.ts';
import { peerRss, runPeerBench, snapshotBefore, snapshotCpu, startPeer, stopPeer } from './langgraph-peer.ts';
import type { PeerBenchKnobs, PeerSettings } from './langgraph-peer.ts';
import { describeTree, sampleTree, toMiB, treeRss } from './proc-tree.ts';
import type { TreeSample } from './proc-tree.ts';
import type { Figures, Measurement } from './report.ts';

/** Settings of this system's measurements. */
export interface ArsPlan {
  /** Seconds after the system is ready before the idle sample. */
  readonly settleS: number;
  /** Starts recorded by the start-latency phase. */
  readonly starts: number;
  /** Starts recorded with each run ended before the next (0: not measured). */
  readonly startsAlone?: number;
  /** Warm-up of the start-latency and throughput phases, ms. */
  readonly warmupMs: number;
  readonly clients: number;
  /** The throughput window, ms. */
  readonly durationMs: number;
  /** Runs the system must have ended before the soak's RSS sample (0: no soak). */
  readonly runs: number;
  readonly soakMaxMs: number;
  /** Seconds of the sustained run (0: none), sampled every `sampleEveryS`. */
  readonly sustainS: number;
  readonly sampleEveryS: number;
  readonly query: string;
  readonly floor: 'events' | 'queue';
  /** Extra environment of every service. */
  readonly env: Record<string, string>;
  /** Node.js flags of `ars up`'s process instead of `ARS_NODE_FLAGS` (`--ars-node-flags`). */
  readonly nodeFlags?: readonly string[];
}

type Print = (line: string) => void;

const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

function outcomeText(outcome: Outcome): string {
  const failures = [...outcome.failures].map(([k, n]) => `${k} ×${n}`).join(', ');
  return `completed ${outcome.completed}, failed ${outcome.failed}${failures ? ` (${failures})` : ''}, errors ${outcome.errors}`;
}

/** The widest deviation of the tree's RSS from its first warm sample, % (warm: after a fifth of the run). */
function widestDrift(
  samples: readonly { t: number; sample: TreeSample }[],
  seconds: number,
  supervisor: number | undefined,
) {
  const warm = samples.filter((s) => s.t >= seconds / 5).map((s) => treeRss(s.sample, supervisor));
  const first = warm[0] ?? Number.NaN;
  const widest = warm.reduce((w, v) => (Math.abs(v - first) > Math.abs(w - first) ? v : w), first);
  return {
    pct: ((widest - first) / first) * 100,
    series: samples.map((s) => f(toMiB(treeRss(s.sample, supervisor)), 0)),
  };
}

async function arsPhases(system: ArsSystem, plan: ArsPlan, m: Measurement, print: Print): Promise<void> {
  const out: Figures = m.figures;
  const floor = m.kind === 'floor';
  await sleep(plan.settleS * 1000);
  const idle = sampleTree(system.supervisorPid);
  out.idleMiB = toMiB(treeRss(idle, system.excludedPid));
  out.supervisorMiB = toMiB(idle.processes.find((p) => p.pid === system.supervisorPid)?.rssBytes ?? Number.NaN);
  out.idleWithSupervisorMiB = toMiB(treeRss(idle));
  print(
    `  idle: tree ${f(out.idleMiB, 0)} MB (${describeTree(idle, system.excludedPid)}); supervisor ${f(out.supervisorMiB, 0)} MB`,
  );
  if (!(await sseAvailable(system.client(), `peer-bench-probe-${randomUUID().slice(0, 8)}`)))
    throw new Error('GET /v1/events is not served: the figures need the SSE stream');
  let ended = 0;
  if (!floor) {
    const latency = await startLatencyPhase(system, {
      samples: plan.starts,
      warmupMs: plan.warmupMs,
      query: plan.query,
      maxMs: Math.max(60_000, plan.starts * 1_000),
    });
    ended += latency.outcome.ended;
    Object.assign(out, {
      startP50: latency.reply.p50,
      startP95: latency.reply.p95,
      startP99: latency.reply.p99,
      spawnedP50: latency.spawned.p50,
      spawnedP95: latency.spawned.p95,
    });
    print(
      `  start request (fresh session, n=${latency.reply.n}): p50 ${f(latency.reply.p50)} p95 ${f(latency.reply.p95)} p99 ${f(latency.reply.p99)} ms; ` +
        `→ task.spawned p50 ${f(latency.spawned.p50)} p95 ${f(latency.spawned.p95)} ms; runs ${outcomeText(latency.outcome)}`,
    );
    if ((plan.startsAlone ?? 0) > 0) {
      const alone = await startLatencyPhase(system, {
        samples: plan.startsAlone!,
        warmupMs: 0,
        query: plan.query,
        maxMs: Math.max(60_000, plan.startsAlone! * 1_000),
        alone: true,
      });
      ended += alone.outcome.ended;
      Object.assign(out, { startAloneP50: alone.reply.p50, spawnedAloneP50: alone.spawned.p50 });
      print(
        `  start request, each run ended before the next (n=${alone.reply.n}): p50 ${f(alone.reply.p50)} p95 ${f(alone.reply.p95)} ms; ` +
          `→ task.spawned p50 ${f(alone.spawned.p50)} ms`,
      );
    }
  }
  const tp = await throughputPhase(system, {
    clients: plan.clients,
    warmupMs: plan.warmupMs,
    durationMs: plan.durationMs,
    query: plan.query,
  });
  ended += tp.outcome.ended;
  const runs = Math.max(1, tp.outcome.completed + tp.outcome.failed);
  Object.assign(out, {
    runsPerSecond: tp.runsPerSecond,
    runP50: tp.latency.p50,
    cpuMsPerRun: (tp.cpuSeconds * 1000) / runs,
    supervisorCpuMsPerRun: (tp.supervisorCpuSeconds * 1000) / runs,
  });
  const byProcess = Object.entries(tp.cpuByProcess)
    .filter(([, s]) => s > 0)
    .map(([name, s]) => `${name} ${f((s * 1000) / runs)}`)
    .join(', ');
  print(
    `  ${tp.clients} clients, ${f(tp.seconds, 1)} s: ${f(tp.runsPerSecond, 1)} runs/s (${outcomeText(tp.outcome)}); ` +
      `start → final event p50 ${f(tp.latency.p50, 1)} p99 ${f(tp.latency.p99, 1)} ms; CPU ms/run ${byProcess}`,
  );
  const after = sampleTree(system.supervisorPid);
  out.afterMiB = toMiB(treeRss(after, system.excludedPid));
  print(`  after the phases: tree ${f(out.afterMiB, 0)} MB (${describeTree(after, system.excludedPid)})`);
  if (floor) return;
  if (plan.runs > 0) {
    const soak = await soakPhase(system, {
      clients: plan.clients,
      runs: Math.max(0, plan.runs - ended),
      maxMs: plan.soakMaxMs,
      query: plan.query,
    });
    ended += soak.outcome.ended;
    const sample = sampleTree(system.supervisorPid);
    Object.assign(out, { soakRuns: ended, soakMiB: toMiB(treeRss(sample, system.excludedPid)) });
    if (!soak.reached) m.notes.push(`soak stopped at its time limit after ${ended} runs`);
    print(
      `  soak: ${ended} runs ended in all, ${f(soak.seconds, 0)} s (${outcomeText(soak.outcome)}); tree ${f(out.soakMiB ?? NaN, 0)} MB (${describeTree(sample, system.excludedPid)})`,
    );
  }
  if (plan.sustainS > 0) {
    const sustain = await sustainPhase(system, {
      clients: plan.clients,
      seconds: plan.sustainS,
      everyS: plan.sampleEveryS,
      query: plan.query,
    });
    const drift = widestDrift(sustain.samples, plan.sustainS, system.excludedPid);
    Object.assign(out, { sustainWidestPct: Math.abs(drift.pct), sustainSeconds: plan.sustainS });
    print(
      `  sustained ${plan.sustainS} s (${outcomeText(sustain.outcome)}): widest drift once warm ${f(drift.pct, 1)}%; tree MB every ${plan.sampleEveryS} s: ${drift.series.join(' ')}`,
    );
  }
}

/** Measures this system in the mode of `m.kind` (or its floor). */
export async function measureArs(
  plan: ArsPlan,
  m: Measurement,
  print: Print,
  track: (stop: () => Promise<void>) => () => void,
) {
  const system = await startArsSystem({
    mode: m.kind === 'one' ? 'one-process' : 'split',
    ...(m.kind === 'floor' ? { floor: plan.floor } : {}),
    env: plan.env,
    ...(plan.nodeFlags === undefined ? {} : { nodeFlags: plan.nodeFlags }),
  });
  const untrack = track(() => system.stop());
  try {
    await arsPhases(system, plan, m, print);
  } finally {
    await system.stop();
    untrack();
  }
}

/** Settings of the peer's measurements. */
export interface PeerPlan {
  readonly settings: PeerSettings;
  readonly knobs: PeerBenchKnobs;
  readonly settleS: number;
  /** Where bench.mjs writes its JSON (one file per measurement). */
  readonly outFor: (index: number) => string;
}

/** Measures the peer with its own bench.mjs. */
export async function measurePeer(
  plan: PeerPlan,
  m: Measurement,
  print: Print,
  track: (stop: () => Promise<void>) => () => void,
) {
  // Tracked before it is up: an interrupt during start.sh stops it too.
  const untrack = track(() => stopPeer(plan.settings));
  try {
    const peer = await startPeer(plan.settings);
    m.notes.push(`peer on node ${peer.node}`);
    await sleep(plan.settleS * 1000);
    const idle = peerRss(peer);
    m.figures.idleMiB = idle.treeMiB;
    print(`  idle: tree ${f(idle.treeMiB, 0)} MB (${idle.processes}); node ${peer.node}`);
    const show = (line: string) => {
      if (/^\((a|b2|c2|c3)\)|^RSS after|^phase .* failed/.test(line)) print(`  peer: ${line}`);
    };
    const result = await runPeerBench(plan.settings, peer, plan.knobs, plan.outFor(m.index), show);
    m.raw = result;
    const failed = (['a', 'b2', 'c2', 'c3'] as const).filter((p) => result[p]?.error !== undefined);
    if (failed.length > 0)
      throw new Error(`the peer's phase ${failed.join(', ')} failed: ${result[failed[0]!]?.error}`);
    const a = result.a?.create_thread_plus_run_ms;
    const b2 = result.b2?.first_event_ms;
    const c3 = result.c3;
    Object.assign(m.figures, {
      ...(a === undefined ? {} : { startP50: a.p50, startP95: a.p95, startP99: a.p99 }),
      ...(b2 === undefined ? {} : { spawnedP50: b2.p50, spawnedP95: b2.p95 }),
      ...(result.c2?.runs_per_s === undefined ? {} : { pollRunsPerSecond: result.c2.runs_per_s }),
    });
    const afterC3 = result.rss['after_c3'];
    const before = snapshotBefore(result, 'c3');
    if (c3?.runs_per_s !== undefined && afterC3 !== undefined && before !== undefined) {
      const runs = Math.max(1, (c3.runs_ok ?? 0) + (c3.runs_failed ?? 0));
      Object.assign(m.figures, {
        runsPerSecond: c3.runs_per_s,
        runP50: c3.per_run_to_final_event_ms?.p50,
        cpuMsPerRun: ((snapshotCpu(afterC3) - snapshotCpu(before)) * 1000) / runs,
      });
      if ((c3.runs_failed ?? 0) > 0) m.notes.push(`c3: ${c3.runs_failed} runs failed`);
    }
    const last = Object.keys(result.rss)
      .filter((k) => /^after_(a|b2|c2|c3)$/.test(k))
      .at(-1);
    if (last !== undefined) m.figures.afterMiB = result.rss[last]!.tree_rss_mb;
  } finally {
    await stopPeer(plan.settings);
    untrack();
  }
}
