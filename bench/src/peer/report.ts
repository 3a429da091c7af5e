/**
 * The figures of each measured system and the table of issue 29's targets:
 * figure | peer | one-process | split | ratio | target | met. Each system
 * may be measured several times in one run (`--order`); a cell shows the
 * median, with the range when there are several, and ratios and targets are
 * judged on the medians. A missed target is a finding, not a failure.
 */

/** What was measured: the peer, this system in one of its two modes, or the floor of its message flow. */
export type Kind = 'peer' | 'one' | 'split' | 'floor';

/** The figures of one measured system (MiB, ms, runs/s); absent when not measured. */
export interface Figures {
  /** RSS of the whole tree before any request, nats-server included, the supervisor left out (peer: its whole tree). */
  idleMiB?: number;
  /** RSS of the supervisor alone before any request (this system; the peer has none apart from its tree). */
  supervisorMiB?: number;
  /** The tree and its supervisor (`ars up` as a user runs it). */
  idleWithSupervisorMiB?: number;
  startP50?: number;
  startP95?: number;
  startP99?: number;
  /** Start → the run's first event on SSE (this system: `task.spawned`; peer: phase b2's first event). */
  spawnedP50?: number;
  spawnedP95?: number;
  /** With each run ended before the next start (`--starts-alone`): the start's own path, nothing in flight. */
  startAloneP50?: number;
  spawnedAloneP50?: number;
  /** Runs/s, 16 clients each waiting for its run's final event on SSE (peer: c3). */
  runsPerSecond?: number;
  /** Start → final event under that load, p50. */
  runP50?: number;
  /** CPU ms per run of the whole tree (the supervisor left out) in the throughput window. */
  cpuMsPerRun?: number;
  /** CPU ms per run of the supervisor alone. */
  supervisorCpuMsPerRun?: number;
  /** RSS of the tree after the phases above. */
  afterMiB?: number;
  /** Runs the system had ended when `soakMiB` was read. */
  soakRuns?: number;
  soakMiB?: number;
  /** Widest deviation of the tree's RSS from its warm value over the sustained run, %. */
  sustainWidestPct?: number;
  sustainSeconds?: number;
  /** Peer c2: runs/s with 16 clients polling every 20 ms. */
  pollRunsPerSecond?: number;
}

/** One measured system. */
export interface Measurement {
  readonly kind: Kind;
  /** Its position in `--order`. */
  readonly index: number;
  /** The 1-minute load average when its measurement began and ended. */
  readonly load: number[];
  readonly figures: Figures;
  readonly notes: string[];
  /** Set when the measurement broke down (a malfunction). */
  error?: string;
  /** The peer's bench.mjs result as it wrote it. */
  raw?: unknown;
}

type Target =
  | { readonly kind: 'none' }
  | { readonly kind: 'at-most'; readonly value: number }
  | { readonly kind: 'peer-times'; readonly factor: number };

interface RowSpec {
  readonly key: keyof Figures;
  readonly label: string;
  readonly digits: number;
  readonly target: Target;
  readonly targetText?: string;
}

const ROWS: readonly RowSpec[] = [
  {
    key: 'idleMiB',
    label: 'RSS idle, the system (split: without its supervisor), MB',
    digits: 0,
    target: { kind: 'at-most', value: 350 },
    targetText: '≤ 350',
  },
  {
    key: 'supervisorMiB',
    label: 'RSS idle, the ars up process (one-process: it hosts the services), MB',
    digits: 0,
    target: { kind: 'none' },
  },
  {
    key: 'idleWithSupervisorMiB',
    label: 'RSS idle, everything ars up started, itself included, MB',
    digits: 0,
    target: { kind: 'at-most', value: 350 },
    targetText: '≤ 350',
  },
  {
    key: 'startP50',
    label: 'start request p50, fresh session, ms',
    digits: 2,
    target: { kind: 'peer-times', factor: 1 },
    targetText: "≤ peer's",
  },
  { key: 'startP95', label: 'start request p95, ms', digits: 2, target: { kind: 'none' } },
  {
    key: 'startP99',
    label: 'start request p99, ms',
    digits: 2,
    target: { kind: 'at-most', value: 15 },
    targetText: '≤ 15',
  },
  {
    key: 'spawnedP50',
    label: 'start → task.spawned on SSE p50, ms',
    digits: 2,
    target: { kind: 'at-most', value: 3 },
    targetText: '≤ 3',
  },
  { key: 'spawnedP95', label: 'start → task.spawned on SSE p95, ms', digits: 2, target: { kind: 'none' } },
  {
    key: 'startAloneP50',
    label: 'start request p50, no run in flight (--starts-alone), ms',
    digits: 2,
    target: { kind: 'none' },
  },
  {
    key: 'spawnedAloneP50',
    label: 'start → task.spawned p50, no run in flight, ms',
    digits: 2,
    target: { kind: 'none' },
  },
  {
    key: 'runsPerSecond',
    label: 'runs/s, 16 clients, final event on SSE',
    digits: 1,
    target: { kind: 'peer-times', factor: 5 },
    targetText: "≥ 5× peer's c3",
  },
  { key: 'runP50', label: 'start → final event under load p50, ms', digits: 1, target: { kind: 'none' } },
  {
    key: 'cpuMsPerRun',
    label: 'CPU ms per run, tree',
    digits: 2,
    target: { kind: 'at-most', value: 5 },
    targetText: '≤ 5',
  },
  { key: 'supervisorCpuMsPerRun', label: 'CPU ms per run, supervisor', digits: 2, target: { kind: 'none' } },
  { key: 'afterMiB', label: 'RSS after the phases, tree, MB', digits: 0, target: { kind: 'none' } },
  {
    key: 'soakMiB',
    label: 'RSS after the soak, tree, MB',
    digits: 0,
    target: { kind: 'at-most', value: 600 },
    targetText: '≤ 600 at 10,000 runs',
  },
  {
    key: 'sustainWidestPct',
    label: 'RSS widest drift once warm, tree, %',
    digits: 1,
    target: { kind: 'at-most', value: 10 },
    targetText: '≤ 10 over 600 s',
  },
  { key: 'pollRunsPerSecond', label: 'runs/s, 16 clients polling (peer c2)', digits: 1, target: { kind: 'none' } },
];

/** The median of the measured values, NaN when none. */
function median(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function valuesOf(measurements: readonly Measurement[], kind: Kind, key: keyof Figures): number[] {
  return measurements
    .filter((m) => m.kind === kind && m.error === undefined)
    .map((m) => m.figures[key])
    .filter((v): v is number => v !== undefined && Number.isFinite(v));
}

function cell(values: readonly number[], digits: number): string {
  if (values.length === 0) return '—';
  const text = median(values).toFixed(digits);
  if (values.length === 1) return text;
  return `${text} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

/** A row of the printed table. */
export interface TableRow {
  readonly figure: string;
  readonly peer: string;
  readonly one: string;
  readonly split: string;
  readonly ratio: string;
  readonly target: string;
  readonly met: string;
}

const yesNo = (ok: boolean | undefined) => (ok === undefined ? '—' : ok ? 'yes' : 'no');

function judge(target: Target, value: number, peer: number): boolean | undefined {
  if (!Number.isFinite(value)) return undefined;
  if (target.kind === 'at-most') return value <= target.value;
  if (target.kind === 'peer-times') {
    if (!Number.isFinite(peer)) return undefined;
    // "≥ k× the peer's" for a rate, "no higher than the peer's" for a latency.
    return target.factor === 1 ? value <= peer : value >= target.factor * peer;
  }
  return undefined;
}

function metText(spec: RowSpec, one: number, split: number, peer: number): string {
  if (spec.target.kind === 'none') return '';
  const a = judge(spec.target, one, peer);
  const b = judge(spec.target, split, peer);
  if (a === undefined && b === undefined) return '—';
  return `one ${yesNo(a)}, split ${yesNo(b)}`;
}

const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—';

/** The rows of the table (rows nothing measured are left out). */
export function tableRows(measurements: readonly Measurement[], soakRuns: number | undefined): TableRow[] {
  const rows: TableRow[] = [];
  for (const spec of ROWS) {
    const peerValues = valuesOf(measurements, 'peer', spec.key);
    const oneValues = valuesOf(measurements, 'one', spec.key);
    const splitValues = valuesOf(measurements, 'split', spec.key);
    if (peerValues.length + oneValues.length + splitValues.length === 0) continue;
    const [peer, one, split] = [median(peerValues), median(oneValues), median(splitValues)];
    const label =
      spec.key === 'soakMiB' && soakRuns !== undefined ? `RSS after ${soakRuns} runs, tree, MB` : spec.label;
    rows.push({
      figure: label,
      peer: cell(peerValues, spec.digits),
      one: cell(oneValues, spec.digits),
      split: cell(splitValues, spec.digits),
      ratio: Number.isFinite(peer) ? `one ${ratio(one, peer)}, split ${ratio(split, peer)}` : '',
      target: spec.targetText ?? '',
      met: metText(spec, one, split, peer),
    });
  }
  const one = median(valuesOf(measurements, 'one', 'runsPerSecond'));
  const split = median(valuesOf(measurements, 'split', 'runsPerSecond'));
  if (Number.isFinite(one) || Number.isFinite(split)) {
    rows.push({
      figure: 'runs/s, one-process ÷ split',
      peer: '',
      one: Number.isFinite(one) ? one.toFixed(1) : '—',
      split: Number.isFinite(split) ? split.toFixed(1) : '—',
      ratio: ratio(one, split),
      target: '≥ 1',
      met: Number.isFinite(one / split) ? yesNo(one >= split) : '—',
    });
  }
  const floorValues = valuesOf(measurements, 'floor', 'runsPerSecond');
  if (floorValues.length > 0) {
    const floor = median(floorValues);
    rows.push({
      figure: `runs/s ÷ the floor's (${cell(floorValues, 1)} runs/s)`,
      peer: '',
      one: Number.isFinite(one) ? `${((one / floor) * 100).toFixed(1)}%` : '—',
      split: Number.isFinite(split) ? `${((split / floor) * 100).toFixed(1)}%` : '—',
      ratio: '',
      target: '≥ 60%',
      met: `one ${yesNo(Number.isFinite(one) ? one >= 0.6 * floor : undefined)}, split ${yesNo(Number.isFinite(split) ? split >= 0.6 * floor : undefined)}`,
    });
  }
  return rows;
}

/** The table as Markdown, columns padded. */
export function formatTable(rows: readonly TableRow[]): string {
  const header: TableRow = {
    figure: 'figure',
    peer: 'peer',
    one: 'one-process',
    split: 'split',
    ratio: 'ratio to peer',
    target: 'target',
    met: 'met',
  };
  const columns = Object.keys(header) as (keyof TableRow)[];
  const all = [header, ...rows];
  const widths = columns.map((c) => Math.max(...all.map((r) => r[c].length)));
  const line = (r: TableRow) => `| ${columns.map((c, i) => r[c].padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * Flags: a throughput below 60% of the floor's in the same run (issue 29's
 * regression line). Returned as text lines; they do not fail the run.
 */
export function flags(measurements: readonly Measurement[]): string[] {
  const floor = median(valuesOf(measurements, 'floor', 'runsPerSecond'));
  if (!Number.isFinite(floor)) return [];
  const out: string[] = [];
  for (const kind of ['one', 'split'] as const) {
    const value = median(valuesOf(measurements, kind, 'runsPerSecond'));
    if (Number.isFinite(value) && value < 0.6 * floor)
      out.push(
        `REGRESSION FLAG: ${kind} ${value.toFixed(1)} runs/s is ${((value / floor) * 100).toFixed(1)}% of the floor's ${floor.toFixed(1)} (target ≥ 60%)`,
      );
  }
  return out;
}
