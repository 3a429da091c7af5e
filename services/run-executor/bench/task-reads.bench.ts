import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '@ars/store';
import { literalPattern } from '../src/domain/read-scope.ts';
import { newTaskRecord } from '../src/domain/start.ts';
import { createTaskRepository } from '../src/store/task.repository.ts';

/**
 * The run-executor's task reads on the embedded store (sqlite engine) with
 * many tasks in one caller's scope: how long each read takes and how long
 * it holds the event loop (the largest lag of a 10 ms probe timer while it
 * runs), since the store reads on the executor's own thread and no run of
 * that executor moves meanwhile.
 *
 *   node services/run-executor/bench/task-reads.bench.ts [--tasks 100000] [--sessions 10]
 *
 * One user's tasks, spread over `--sessions` sessions; a tenth of them
 * failed, the rest complete.
 */

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '100000' },
    sessions: { type: 'string', default: '10' },
  },
});
/** The figures go to standard output, one line each (as the other benchmarks print them). */
const print = (line: string) => process.stdout.write(`${line}\n`);
const total = Number(values.tasks);
const sessions = Number(values.sessions);

const dir = await mkdtemp(join(tmpdir(), 'ars-task-reads-'));
const store = await openStore({ dataDir: dir, database: 'run-executor', engine: 'sqlite' });
try {
  const repository = await createTaskRepository(store);
  const triple = (i: number) => ({ tenant: 't', user: 'u', session: `s${i % sessions}` });
  const started = performance.now();
  const epoch = Date.now() - total;
  for (let from = 0; from < total; from += 1_000) {
    const batch: Promise<unknown>[] = [];
    for (let i = from; i < Math.min(total, from + 1_000); i++) {
      const task = newTaskRecord({
        taskId: `${(epoch + i).toString(16).padStart(12, '0')}-${String(i).padStart(9, '0')}`,
        triple: triple(i),
        request: { identity: {}, query: `tell me something about topic number ${i}, in detail` },
        agent: {},
        artifacts: [],
        now: new Date(epoch + i).toISOString(),
      });
      batch.push(repository.insertTask({ ...task, status: i % 10 === 0 ? 'failed' : 'complete' }));
    }
    await Promise.all(batch);
  }
  print(
    `task reads benchmark: node ${process.version}, load ${loadavg()[0]?.toFixed(2)}, ${total} tasks of one user in ${sessions} sessions (inserted in ${(performance.now() - started).toFixed(0)} ms)`,
  );

  const text = (needle: string) => ({
    $or: [
      { query: { $regex: literalPattern(needle), $options: 'i' } },
      { goal: { $regex: literalPattern(needle), $options: 'i' } },
    ],
  });
  const session = { tenant: 't', user: 'u', session: 's0' };
  /** Follows `next_cursor` to the end, as a client does; the pages and hits it took. */
  const everyPage = async (filter: Record<string, unknown>) => {
    let pages = 0;
    let hits = 0;
    let cursor: string | undefined;
    do {
      const page = await repository.listTasks(filter, { limit: 50, cursor, scope: user });
      pages++;
      hits += page.items.length;
      cursor = page.next_cursor ?? undefined;
      // Each page is a request of its own: the event loop runs other work between them.
      await new Promise((resolve) => setImmediate(resolve));
    } while (cursor !== undefined);
    return { pages, hits };
  };
  const user = { tenant: 't', user: 'u' };
  const reads: [string, () => Promise<unknown>][] = [
    ['session: first page of 50', () => repository.listTasks(session, { limit: 50 })],
    ['session: status counters', () => repository.countByStatus(session)],
    ['user: first page of 50', () => repository.listTasks(user, { limit: 50 })],
    ['user: status counters', () => repository.countByStatus(user)],
    // A narrowed read names its scope, as the handlers do: the embedded store reads a bounded part of it.
    [
      'user: page, text matching nothing',
      () => repository.listTasks({ ...user, ...text('zzz') }, { limit: 50, scope: user }),
    ],
    ['user: counters, text matching nothing', () => repository.countByStatus({ ...user, ...text('zzz') }, user)],
    [
      'user: page of running tasks (none)',
      () => repository.listTasks({ ...user, status: 'running' }, { limit: 50, scope: user }),
    ],
    ['user: every page of a text search (1 hit)', () => everyPage({ ...user, ...text('topic number 7,') })],
  ];
  for (const [label, read] of reads) {
    let lag = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      lag = Math.max(lag, now - last - 10);
      last = now;
    }, 10);
    const t0 = performance.now();
    const result = await read();
    const took = performance.now() - t0;
    await new Promise((resolve) => setTimeout(resolve, 30));
    clearInterval(probe);
    const pages = (result as { pages?: number }).pages;
    const detail = pages === undefined ? '' : `   (${pages} pages)`;
    print(
      `${label.padEnd(42)} ${took.toFixed(1).padStart(8)} ms   event loop held up to ${lag.toFixed(0)} ms${detail}`,
    );
  }
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
