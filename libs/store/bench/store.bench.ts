/**
 * Micro-benchmark of the embedded store's two engines, nedb and sqlite, on
 * disk: per-operation latency on a collection of N documents of about 1 KiB
 * (insertOne, findOne by `_id`, findOne by a unique indexed field, updateOne
 * by `_id` setting an indexed field, and a findOneAndUpdate claim of the
 * next ready job in rank order), and the process's memory once the N
 * documents are loaded. Each engine runs in a process of its own (started
 * with --expose-gc), so neither's memory counts in the other's figures.
 *
 * The claim is measured fewer times: nedb reads every ready job for each
 * one (a scan of the matches, then a sort), a tenth of a second at 100,000.
 *
 *   node libs/store/bench/store.bench.ts [--documents 100000] [--ops 5000] [--claims 200] [--engines nedb,sqlite]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from '../src/index.ts';
import type { Collection, EmbeddedEngine } from '../src/index.ts';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '100000' },
    ops: { type: 'string', default: '5000' },
    claims: { type: 'string', default: '200' },
    engines: { type: 'string', default: 'nedb,sqlite' },
    child: { type: 'string' },
  },
});
const DOCUMENTS = Number(values.documents);
const OPS = Number(values.ops);
const CLAIMS = Number(values.claims);
const BATCH = 1_000;
/** Calls before the measured ones, at most a tenth of them. */
const WARMUP = 200;

interface Job {
  _id: string;
  key: string;
  tenant: string;
  status: 'ready' | 'claimed';
  rank: number;
  payload: string;
  meta: { created_at: string; attempts: number; labels: string[] };
}

/** Latency figures of one operation, in microseconds. */
interface Timing {
  p50: number;
  p99: number;
  mean: number;
}

/** What one engine's process reports. */
interface Report {
  engine: EmbeddedEngine;
  loadSeconds: number;
  /** The process before the store opened: Node, its type stripper and the store's modules. */
  rssStartMiB: number;
  rssMiB: number;
  heapMiB: number;
  diskMiB: number;
  timings: Record<string, Timing>;
}

const print = (line: string) => process.stdout.write(`${line}\n`);
const pad = (n: number) => String(n).padStart(7, '0');
/** About 1 KiB as JSON; the payload varies so that nothing compresses away. */
function job(i: number): Job {
  return {
    _id: `job-${pad(i)}`,
    key: `key-${pad(i)}`,
    tenant: `tenant-${i % 100}`,
    status: 'ready',
    rank: (i * 7919) % 1_000_003,
    payload: `${i.toString(36)}:`.repeat(200).slice(0, 820),
    meta: { created_at: new Date(1_700_000_000_000 + i * 1000).toISOString(), attempts: 0, labels: ['a', 'b'] },
  };
}

function timing(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { p50: at(0.5), p99: at(0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

/** Runs `operation` `count` times one after another, after a warm-up (calls numbered on); latency of each in µs. */
async function measure(count: number, operation: (i: number) => Promise<unknown>): Promise<Timing> {
  const warmup = Math.min(WARMUP, Math.ceil(count / 10));
  for (let i = 0; i < warmup; i += 1) await operation(i);
  const samples: number[] = [];
  for (let i = warmup; i < warmup + count; i += 1) {
    const start = process.hrtime.bigint();
    await operation(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  process.stderr.write('.');
  return timing(samples);
}

async function directoryMiB(directory: string): Promise<number> {
  let bytes = 0;
  for (const file of await readdir(directory)) bytes += (await stat(join(directory, file))).size;
  return bytes / 2 ** 20;
}

function memory(): { rssMiB: number; heapMiB: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMiB: rss / 2 ** 20, heapMiB: heapUsed / 2 ** 20 };
}

async function load(jobs: Collection<Job>): Promise<number> {
  await jobs.createIndex({ key: 1 }, { unique: true });
  await jobs.createIndex({ status: 1, rank: 1 });
  const start = performance.now();
  for (let from = 0; from < DOCUMENTS; from += BATCH) {
    await jobs.insertMany(Array.from({ length: Math.min(BATCH, DOCUMENTS - from) }, (_, i) => job(from + i)));
  }
  return (performance.now() - start) / 1000;
}

/** One engine, in this process: loads, measures memory, then each operation. */
async function runEngine(engine: EmbeddedEngine): Promise<Report> {
  const rssStartMiB = memory().rssMiB;
  const dataDir = await mkdtemp(join(tmpdir(), `ars-store-bench-${engine}-`));
  const store = await openStore({ dataDir, database: 'bench', engine, compactionIntervalMs: 0 });
  try {
    const jobs = store.collection<Job>('jobs');
    const loadSeconds = await load(jobs);
    const { rssMiB, heapMiB } = memory();
    const pick = (i: number) => (i * 104_729) % DOCUMENTS;
    const timings: Record<string, Timing> = {
      'findOne by _id': await measure(OPS, (i) => jobs.findOne({ _id: `job-${pad(pick(i))}` })),
      'findOne by indexed field': await measure(OPS, (i) => jobs.findOne({ key: `key-${pad(pick(i))}` })),
      'updateOne by _id, $set indexed field': await measure(OPS, (i) =>
        jobs.updateOne({ _id: `job-${pad(pick(i))}` }, { $set: { rank: i } }),
      ),
      'findOneAndUpdate claim': await measure(CLAIMS, () =>
        jobs.findOneAndUpdate({ status: 'ready' }, { $set: { status: 'claimed' } }, { sort: { rank: 1 } }),
      ),
      insertOne: await measure(OPS, (i) => jobs.insertOne(job(DOCUMENTS + i))),
    };
    await store.close();
    const diskMiB = await directoryMiB(join(dataDir, 'bench'));
    return { engine, loadSeconds, rssStartMiB, rssMiB, heapMiB, diskMiB, timings };
  } finally {
    await store.close().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

function runChild(engine: EmbeddedEngine): Promise<Report> {
  const script = fileURLToPath(import.meta.url);
  const counts = ['--documents', String(DOCUMENTS), '--ops', String(OPS), '--claims', String(CLAIMS)];
  const args = ['--expose-gc', script, '--child', engine, ...counts];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as Report);
      else reject(new Error(`${engine} benchmark exited with ${code}`));
    });
  });
}

function printReports(reports: Report[]): void {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  print(`${DOCUMENTS} documents of ~1 KiB, ${OPS} operations each (claims: ${CLAIMS}), Node ${process.version}`);
  print('');
  print(`| operation | ${reports.map((r) => `${r.engine} p50 / p99 / mean (µs)`).join(' | ')} |`);
  print(`|---|${reports.map(() => '---').join('|')}|`);
  for (const name of Object.keys(reports[0]?.timings ?? {})) {
    const cells = reports.map(({ timings }) => {
      const t = timings[name] as Timing;
      return `${f(t.p50)} / ${f(t.p99)} / ${f(t.mean)}`;
    });
    print(`| ${name} | ${cells.join(' | ')} |`);
  }
  print('');
  print(
    '| engine | load (insertMany of 1,000) | RSS at start | RSS after load | heap after load | on disk after the run |',
  );
  print('|---|---|---|---|---|---|');
  for (const r of reports) {
    const mib = [r.rssStartMiB, r.rssMiB, r.heapMiB, r.diskMiB].map((n) => `${f(n)} MiB`);
    print(`| ${r.engine} | ${f(r.loadSeconds, 2)} s | ${mib.join(' | ')} |`);
  }
}

if (values.child !== undefined) {
  process.stdout.write(JSON.stringify(await runEngine(values.child as EmbeddedEngine)));
} else {
  const reports: Report[] = [];
  for (const engine of values.engines.split(',') as EmbeddedEngine[]) reports.push(await runChild(engine));
  printReports(reports);
}
