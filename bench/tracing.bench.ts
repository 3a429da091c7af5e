/**
 * Benchmark (issue 28): what tracing costs. The one-process system as
 * `ars up` starts it, measured with tracing off and with every span sampled
 * and exported over OTLP/HTTP (protobuf) to a receiver in this process that
 * answers 200 and keeps nothing, alternated in one run (`--rounds` pairs,
 * off first). Figures: start request p50 (fresh session per start), runs/s
 * of 16 closed-loop clients each waiting for its run's final event on SSE,
 * CPU ms per run; then the cost of tracing against the target (≤ 10%),
 * judged on the median of the rounds' own costs (the host's speed drifts by
 * more than the cost between rounds; the order alternates per round).
 *
 *   node bench/tracing.bench.ts [--rounds 2] [--starts 200] [--duration 15] [--warmup 3000] [--clients 16]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startOtlpReceiver } from '@ars/telemetry/testing';
import { measureArs } from './src/peer/measure.ts';
import type { ArsPlan } from './src/peer/measure.ts';
import type { Figures, Measurement } from './src/peer/report.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    starts: { type: 'string', default: '200' },
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3000' },
    clients: { type: 'string', default: '16' },
  },
});

const print = (line: string): void => void process.stdout.write(`${line}\n`);

/** Takes every OTLP export and drops it: the exporter's work is measured, not a collector's. */
const sink = await startOtlpReceiver({ keep: false });
const endpoint = sink.url;

const plan = (env: Record<string, string>): ArsPlan => ({
  settleS: 2,
  starts: Number(values.starts),
  warmupMs: Number(values.warmup),
  clients: Number(values.clients),
  durationMs: Number(values.duration) * 1000,
  runs: 0,
  soakMaxMs: 0,
  sustainS: 0,
  sampleEveryS: 10,
  query: '#script tool:echo{"a":1};tool:echo{"b":2};finish:done',
  floor: 'events',
  env,
});
const SETTINGS = {
  off: {},
  traced: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on' },
} as const;

const stops = new Set<() => Promise<void>>();
const track = (stop: () => Promise<void>) => {
  stops.add(stop);
  return () => void stops.delete(stop);
};
const results: Record<keyof typeof SETTINGS, Figures[]> = { off: [], traced: [] };
try {
  let index = 0;
  for (let round = 1; round <= Number(values.rounds); round += 1) {
    // Off first in odd rounds, traced first in even ones: a host slowing down (or speeding up) over the run
    // then weighs on both sides alike.
    const order = round % 2 === 1 ? (['off', 'traced'] as const) : (['traced', 'off'] as const);
    for (const name of order) {
      const m: Measurement = { kind: 'one', index: index++, load: [loadavg()[0] ?? 0], figures: {}, notes: [] };
      print(`\n[round ${round}] tracing ${name} (load ${m.load[0]?.toFixed(2)})`);
      await measureArs(plan(SETTINGS[name]), m, (line) => print(`  ${line}`), track);
      if (m.error !== undefined) throw new Error(`tracing ${name}: ${m.error}`);
      results[name].push(m.figures);
    }
  }
} finally {
  for (const stop of stops) await stop();
  await sink.close();
}

const mean = (figures: Figures[], key: 'startP50' | 'runsPerSecond' | 'cpuMsPerRun') => {
  const xs = figures.map((f) => f[key]).filter((x): x is number => x !== undefined);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
};
/** The cost of tracing in each round (its own off against its own traced), then their median. */
const medianCost = (key: 'startP50' | 'runsPerSecond' | 'cpuMsPerRun', higherIsWorse: boolean) => {
  const costs = results.off
    .map((off, i) => [off[key], results.traced[i]?.[key]] as const)
    .filter((pair): pair is readonly [number, number] => pair[0] !== undefined && pair[1] !== undefined)
    .map(([off, on]) => (higherIsWorse ? on / off - 1 : 1 - on / off))
    .sort((a, b) => a - b);
  const middle = Math.floor(costs.length / 2);
  const median = costs.length % 2 === 1 ? costs[middle]! : ((costs[middle - 1] ?? 0) + (costs[middle] ?? 0)) / 2;
  return { median, each: costs };
};
const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
print(
  '\n| figure | tracing off | traced (100%, exported) | cost of the means | median cost of the rounds (each) | target |',
);
print('|---|---|---|---|---|---|');
const row = (label: string, key: 'startP50' | 'runsPerSecond' | 'cpuMsPerRun', higherIsWorse: boolean) => {
  const [off, on] = [mean(results.off, key), mean(results.traced, key)];
  const cost = higherIsWorse ? on / off - 1 : 1 - on / off;
  const rounds = medianCost(key, higherIsWorse);
  const met = rounds.median <= 0.1 ? 'met' : 'not met';
  print(
    `| ${label} | ${off.toFixed(2)} | ${on.toFixed(2)} | ${percent(cost)} | ${percent(rounds.median)} (${rounds.each.map(percent).join(', ')}) | ≤ 10% (median): ${met} |`,
  );
};
row('start request p50, ms', 'startP50', true);
row('runs/s, 16 clients', 'runsPerSecond', false);
row('CPU ms per run, tree', 'cpuMsPerRun', true);
print(
  `\nload average now ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; means of ${values.rounds} alternated rounds`,
);
