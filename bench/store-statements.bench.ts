/**
 * What the embedded store does per run: every SQL statement the services
 * execute while `--runs` 3-step scripted runs go through the whole system in
 * this process (`startAllInOne`, the embedded sqlite store, a nats-server
 * of its own), counted by service, table and kind, by call site (the first
 * frame outside libs/store), and the transactions they ran in. Counts, not
 * times: they do not depend on the machine's load, so a change to the
 * store's use shows here exactly.
 *
 * The CPU time of this process over the counted runs (the services and the
 * load generator, not nats-server) is printed per run too: with `--no-count`
 * it is the figure to compare two versions of a service's code by,
 * alternated, on this noisy machine.
 *
 * The bytes this process wrote to storage over the counted runs, per run
 * (`write_bytes` of /proc/self/io: the databases' write-ahead logs and
 * their checkpoints; nats-server's stream files are its own) and the write
 * calls it made (sockets included): SQLite writes whole pages, so this is
 * what the commits cost beyond their statements.
 *
 * `--times`: instead of counting statements, the time each store operation
 * held the event loop (its synchronous work inside the store: planning,
 * the statements, (de)serialising, index entries), per operation and per
 * run by call site, and the COMMITs' time per run. The operations are timed
 * at the connection's `transaction` and `readAlone`, so what an operation
 * waits for (the lock, its batch's commit) is not in its figure.
 *
 * `--subjects`: the messages the nats-server routed during the counted runs,
 * per run, by subject (seen by a `>` subscription of its own: a JetStream
 * delivery shows under its message's subject, once per consumer; tokens
 * naming a tenant, session, run or inbox folded to `*`). Counts too.
 *
 *   node bench/store-statements.bench.ts [--runs 200] [--clients 8] [--warmup N] [--sites 25] [--query Q] [--no-count]
 *     [--times] [--subjects]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { connectBus } from '@ars/bus';
import { createClient } from '@ars/client';
import { findFreePort, startTestNats } from '@ars/testkit';
import { startAllInOne } from '../deploy/src/one-process/system.ts';
// eslint-disable-next-line no-restricted-imports -- the statements are counted at the store's internal connection
import { Connection } from '../libs/store/src/sqlite-connection.ts';
import { cpuSeconds } from './src/proc-stats.ts';
import { openRunClient, TERMINAL_TYPES } from './src/run-driver.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    clients: { type: 'string', default: '8' },
    sites: { type: 'string', default: '25' },
    // Runs before the counted ones (default three per client): every session admitted, the code compiled.
    warmup: { type: 'string' },
    query: { type: 'string', default: '#script tool:echo{"a":1};tool:echo{"b":2};finish:done' },
    // Drive the runs without counting, e.g. under `node --cpu-prof`: the counting costs more than the statements.
    'no-count': { type: 'boolean', default: false },
    subjects: { type: 'boolean', default: false },
    times: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const CLIENTS = Number(values.clients);
const SITES = Number(values.sites);

/** This process's I/O counters (Linux; empty elsewhere). */
function ioCounters(): Record<string, number> {
  try {
    const lines = readFileSync('/proc/self/io', 'utf8').trim().split('\n');
    return Object.fromEntries(lines.map((line) => line.split(': ')).map(([key, value]) => [key, Number(value)]));
  } catch {
    return {};
  }
}

/** The statement's kind and table: `SELECT c:tasks`, `BEGIN`, `INSERT e:tasks`… */
function shapeOf(sql: string): string {
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '?';
  const table = /"([ce]:[^"]+)"/.exec(sql)?.[1];
  return table === undefined ? sql.replace(/\s+/g, ' ').slice(0, 40) : `${verb} ${table}`;
}

const SERVICE_PATH = new RegExp(`services\\${sep}([\\w-]+)\\${sep}src\\${sep}(.+?):(\\d+)`);
const STORE_PATH = `libs${sep}store${sep}`;

/** The first frame of the stack outside libs/store and this file: `service file:line`. */
function callSite(stack: string): string {
  for (const line of stack.split('\n').slice(1)) {
    if (line.includes(STORE_PATH) || line.includes('store-statements.bench')) continue;
    const service = SERVICE_PATH.exec(line);
    if (service !== null) return `${service[1]} ${service[2]}:${service[3]}`;
    const lib = /(libs\/[\w-]+\/src\/.+?):(\d+)/.exec(line);
    if (lib !== null) return `${lib[1]}:${lib[2]}`;
  }
  return '(unknown)';
}

/** A subject with the tokens that name one tenant, session, run, inbox or acknowledgement folded to `*`. */
function subjectShape(subject: string): string {
  const tokens = subject.split('.');
  if (subject.startsWith('ars.ev.')) return `ars.ev.*.*.*.${tokens.slice(5).join('.')}`;
  if (subject.startsWith('ars.ctl.')) return 'ars.ctl.*';
  if (subject.startsWith('_INBOX.')) return '_INBOX.*';
  if (subject.startsWith('$JS.ACK.')) return `$JS.ACK.${tokens[2]}.${tokens[3]}.*`;
  return subject;
}

Error.stackTraceLimit = 60;
let counting = false;
/** While the counted runs go (`--subjects`): the tap counts what it sees. */
let tapping = false;
const byShape = new Map<string, number>();
const bySite = new Map<string, number>();
let statements = 0;
let transactions = 0;
let readTransactions = 0;
// The statement is fetched once per execution: counting the fetches counts the executions.
const statementOf = Connection.prototype.statement;
Connection.prototype.statement = function (this: Connection, sql: string) {
  if (counting) {
    statements += 1;
    const shape = shapeOf(sql);
    byShape.set(shape, (byShape.get(shape) ?? 0) + 1);
    if (sql === 'BEGIN' || sql === 'BEGIN IMMEDIATE') {
      transactions += 1;
      if (sql === 'BEGIN') readTransactions += 1;
    }
    if (!/^(BEGIN|COMMIT|ROLLBACK|PRAGMA|SAVEPOINT|RELEASE)/.test(sql)) {
      const site = `${callSite(new Error().stack ?? '')}  ${shape}`;
      bySite.set(site, (bySite.get(site) ?? 0) + 1);
    }
  }
  const statement = statementOf.call(this, sql);
  if (!timing || sql !== 'COMMIT') return statement;
  return {
    run: () => {
      const started = process.hrtime.bigint();
      try {
        return statement.run();
      } finally {
        commitNs += process.hrtime.bigint() - started;
      }
    },
  } as typeof statement;
};

/** While the counted runs go (`--times`): each operation's synchronous time, by call site. */
let timing = false;
let commitNs = 0n;
const timeBySite = new Map<string, { ns: bigint; calls: number }>();
const timed = new WeakSet<() => unknown>();

/** `work` timed under the site of the operation that calls the connection now. */
function timedWork<R>(work: () => R): () => R {
  if (!timing || timed.has(work)) return work;
  const site = callSite(new Error().stack ?? '');
  const wrapped = (): R => {
    const started = process.hrtime.bigint();
    try {
      return work();
    } finally {
      const entry = timeBySite.get(site) ?? { ns: 0n, calls: 0 };
      entry.ns += process.hrtime.bigint() - started;
      entry.calls += 1;
      timeBySite.set(site, entry);
    }
  };
  timed.add(wrapped);
  return wrapped;
}
const transactionOf = Connection.prototype.transaction;
Connection.prototype.transaction = function <R>(this: Connection, mode: 'read' | 'write', work: () => R) {
  return transactionOf.call(this, mode, timedWork(work)) as Promise<R>;
};
const readAloneOf = Connection.prototype.readAlone;
Connection.prototype.readAlone = function <R>(this: Connection, work: () => R) {
  return readAloneOf.call(this, timedWork(work)) as Promise<R>;
};

const nats = await startTestNats();
const dataDir = mkdtempSync(join(tmpdir(), 'ars-statements-'));
const port = await findFreePort();
const system = await startAllInOne({
  env: {
    ...process.env,
    NATS_URL: nats.url,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    JETSTREAM_REPLICAS: '1',
  },
});
const tap = values.subjects ? await connectBus({ servers: nats.url, name: 'store-statements-tap' }) : undefined;
const bySubject = new Map<string, number>();
tap?.nc.subscribe('>', {
  callback: (error, msg) => {
    if (error !== null || !tapping) return;
    const shape = subjectShape(msg.subject);
    bySubject.set(shape, (bySubject.get(shape) ?? 0) + 1);
  },
});
try {
  const token = system.devToken;
  if (token === undefined) throw new Error('no dev token: is ARS_AUTH_MODE=production set?');
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const session = `statements-${randomUUID().slice(0, 12)}`;
      return openRunClient(createClient({ baseUrl: system.url, token, session }), {
        session,
        types: [...TERMINAL_TYPES],
        mode: 'sse',
      });
    }),
  );
  const drive = async (runs: number): Promise<void> => {
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (next < runs) {
          next += 1;
          const end = await client.terminal(await client.start(values.query));
          if (end.type !== 'task.completed') throw new Error(`a run ended ${end.type} ${end.errorCode ?? ''}`);
        }
      }),
    );
  };
  await drive(values.warmup === undefined ? CLIENTS * 3 : Number(values.warmup));
  counting = !values['no-count'] && !values.times;
  timing = values.times;
  tapping = values.subjects;
  const began = performance.now();
  const ioBefore = ioCounters();
  const cpuBefore = process.cpuUsage();
  const natsBefore = cpuSeconds(nats.pid);
  const mainBefore = process.threadCpuUsage();
  await drive(RUNS);
  const cpu = process.cpuUsage(cpuBefore);
  const main = process.threadCpuUsage(mainBefore);
  const natsMs = (cpuSeconds(nats.pid) - natsBefore) * 1000;
  const ioAfter = ioCounters();
  const seconds = (performance.now() - began) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 500)); // what the runs' events still cause
  counting = false;
  timing = false;
  tapping = false;
  for (const client of clients) client.close();

  const perRun = (n: number): string => (n / RUNS).toFixed(2).padStart(7);
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  print(
    `store statements per run, ${RUNS} runs by ${CLIENTS} clients in ${seconds.toFixed(1)} s, query ${JSON.stringify(values.query)}`,
  );
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const mainMs = (main.user + main.system) / 1000;
  print(
    `  ${(cpuMs / RUNS).toFixed(3)} CPU ms per run in this process (services and load generator), ` +
      `${(mainMs / RUNS).toFixed(3)} of them on its main thread; nats-server ${(natsMs / RUNS).toFixed(3)}`,
  );
  const ioPerRun = (key: string): string =>
    ioAfter[key] === undefined || ioBefore[key] === undefined
      ? '?'
      : ((ioAfter[key] - ioBefore[key]) / RUNS).toFixed(key.startsWith('sysc') ? 1 : 0);
  print(
    `  ${ioPerRun('write_bytes')} bytes written to storage per run by this process, ` +
      `${ioPerRun('syscw')} write calls (sockets included), ${ioPerRun('syscr')} read calls`,
  );
  if (!values.times) {
    print(
      `  ${perRun(statements)} statements in ${perRun(transactions)} transactions (${perRun(readTransactions)} reads)`,
    );
  }
  if (values.times) {
    const ms = (ns: bigint): number => Number(ns) / 1e6;
    const total = [...timeBySite.values()].reduce((sum, entry) => sum + ms(entry.ns), 0);
    print(
      `  ${(total / RUNS).toFixed(3)} ms per run in store operations, ${(ms(commitNs) / RUNS).toFixed(3)} in COMMITs`,
    );
    print(`\nby call site (top ${SITES}): ms per run, operations per run, µs per operation`);
    for (const [site, entry] of [...timeBySite].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, SITES)) {
      const perOp = ms(entry.ns) / entry.calls;
      print(
        `  ${(ms(entry.ns) / RUNS).toFixed(3)}  ${perRun(entry.calls)}  ${(perOp * 1000).toFixed(1).padStart(6)}  ${site}`,
      );
    }
  }
  if (statements > 0) {
    print('\nby kind and table:');
    for (const [shape, n] of [...byShape].sort((a, b) => b[1] - a[1])) print(`  ${perRun(n)}  ${shape}`);
    print(`\nby call site (top ${SITES}, transaction statements left out):`);
    for (const [site, n] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, SITES)) print(`  ${perRun(n)}  ${site}`);
  }
  if (tap !== undefined) {
    const routed = [...bySubject.values()].reduce((sum, n) => sum + n, 0);
    print(`\nNATS messages routed per run: ${perRun(routed).trim()}, by subject:`);
    for (const [shape, n] of [...bySubject].sort((a, b) => b[1] - a[1])) print(`  ${perRun(n)}  ${shape}`);
  }
} finally {
  await tap?.close();
  await system.stop();
  await nats.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
