/**
 * Benchmark (issue 3): runs under load through a nats-server crash. The
 * whole system on this machine, as in `runs.bench.ts`; `--clients` clients
 * (own session, own SSE subscription) each start a 3-step run whose tool
 * waits `--tool-ms`, wait for its terminal event on SSE, and start the next.
 * After `--before` ms nats-server is killed (SIGKILL) and started again on
 * the same store `--down` ms later; the clients keep going (a refused start
 * is tried again after 100 ms) until `--after` ms after the restart.
 *
 * Prints what became of the runs in flight at the crash (their terminal
 * events, how long after the restart each arrived, and how many terminal
 * events each has on the stream), the starts refused while the server was
 * down, and runs/s before the crash and after it.
 *
 *   node bench/nats-restart.bench.ts [--clients 16] [--before 10000] [--down 2000] [--after 20000] [--tool-ms 200]
 */
import { randomUUID } from 'node:crypto';
import { loadavg, cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { startTestNats, startTestSystem } from '@ars/testkit';
import { quantile } from './src/load.ts';
import { openRunClient, TERMINAL_TYPES } from './src/run-driver.ts';
import type { RunClient } from './src/run-driver.ts';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '16' },
    before: { type: 'string', default: '10000' },
    down: { type: 'string', default: '2000' },
    after: { type: 'string', default: '20000' },
    'tool-ms': { type: 'string', default: '200' },
  },
});
const CLIENTS = Number(values.clients);
const BEFORE_MS = Number(values.before);
const DOWN_MS = Number(values.down);
const AFTER_MS = Number(values.after);
const TOOL_MS = Number(values['tool-ms']);
/** How long a run in flight at the crash is waited for. */
const TERMINAL_TIMEOUT_MS = 150_000;
/** The first part of each window left out of its runs/s (warm-up before, recovery after). */
const SETTLE_MS = 5_000;

const QUERY = `#script tool:wait{"ms":${TOOL_MS}};tool:echo{"b":2};finish:done`;

const print = (line: string) => process.stdout.write(`${line}\n`);
const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** One run as a client saw it (`performance.now()` times). */
interface RunRecord {
  readonly taskId: string;
  readonly session: string;
  readonly startedAt: number;
  endedAt?: number;
  type?: string;
}

/** Every stored event of `run` (events.list, all pages). */
async function storedRunEvents(client: ArsClient, run: string, session: string): Promise<EventFrame[]> {
  const frames: EventFrame[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.call<{ items: EventFrame[]; next_cursor?: string }>(
      'events.list',
      { identity: {}, filter: { run }, limit: 500, ...(cursor === undefined ? {} : { cursor }) },
      { session },
    );
    frames.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== undefined);
  return frames;
}

async function main(): Promise<void> {
  const nats = await startTestNats();
  const system = await startTestSystem({ natsUrl: nats.url });
  try {
    print(
      `nats-restart benchmark: node ${process.version}, load ${f(loadavg()[0] ?? 0)} on ${cpus().length} cores; ` +
        `${CLIENTS} clients, crash after ${BEFORE_MS} ms, down ${DOWN_MS} ms, ${AFTER_MS} ms after the restart`,
    );
    print(`query: ${QUERY}`);
    const clients: RunClient[] = await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        openRunClient(system.client(), {
          session: `bench-${randomUUID().slice(0, 8)}`,
          types: [...TERMINAL_TYPES],
          mode: 'sse',
        }),
      ),
    );
    const runs: RunRecord[] = [];
    const refused: number[] = [];
    const lost: RunRecord[] = [];
    const began = performance.now();
    let end = Number.POSITIVE_INFINITY;

    const drive = async (client: RunClient): Promise<void> => {
      while (performance.now() < end) {
        let taskId: string;
        try {
          taskId = await client.start(QUERY);
        } catch {
          refused.push(performance.now());
          await sleep(100);
          continue;
        }
        const record: RunRecord = { taskId, session: client.session, startedAt: performance.now() };
        runs.push(record);
        try {
          const terminal = await client.terminal(taskId, TERMINAL_TIMEOUT_MS);
          record.endedAt = performance.now();
          record.type = terminal.type;
        } catch {
          lost.push(record);
        }
      }
    };
    const driving = Promise.all(clients.map(drive));

    await sleep(BEFORE_MS);
    const crashedAt = performance.now();
    nats.kill();
    await sleep(DOWN_MS);
    await nats.restart();
    const restartedAt = performance.now();
    end = restartedAt + AFTER_MS;
    await driving;
    for (const c of clients) c.close();

    const inFlight = runs.filter((r) => r.startedAt < crashedAt && (r.endedAt === undefined || r.endedAt >= crashedAt));
    const byType = new Map<string, number>();
    for (const r of inFlight) byType.set(r.type ?? 'none', (byType.get(r.type ?? 'none') ?? 0) + 1);
    const recovery = inFlight
      .filter((r) => r.endedAt !== undefined)
      .map((r) => (r.endedAt as number) - restartedAt)
      .sort((a, b) => a - b);
    print(
      `in flight at the crash: ${inFlight.length} runs; ends ${[...byType.entries()].map(([t, n]) => `${t} ${n}`).join(', ')}`,
    );
    print(
      `  restart → their terminal event on SSE: p50 ${f(quantile(recovery, 0.5))} ms  max ${f(recovery.at(-1) ?? Number.NaN)} ms`,
    );
    const api = system.client();
    const terminalsPerRun = await Promise.all(
      inFlight.map(async (r) => {
        const frames = await storedRunEvents(api, r.taskId, r.session);
        return frames.filter((e) => (TERMINAL_TYPES as readonly string[]).includes(e.type)).length;
      }),
    );
    const exactlyOne = terminalsPerRun.filter((n) => n === 1).length;
    print(
      `  stored terminal events: exactly one for ${exactlyOne} of ${inFlight.length} runs (counts ${terminalsPerRun.join(',')})`,
    );

    const completedIn = (from: number, until: number) =>
      runs.filter((r) => r.endedAt !== undefined && r.endedAt >= from && r.endedAt < until).length;
    const perSecond = (from: number, until: number) => completedIn(from, until) / ((until - from) / 1000);
    const firstAfter = runs
      .filter((r) => r.startedAt >= restartedAt && r.endedAt !== undefined)
      .map((r) => (r.endedAt as number) - restartedAt)
      .sort((a, b) => a - b)[0];
    print(
      `starts refused (retried after 100 ms): ${refused.length}; runs with no terminal event within ${TERMINAL_TIMEOUT_MS} ms: ${lost.length}`,
    );
    print(
      `runs/s: before the crash ${f(perSecond(began + SETTLE_MS, crashedAt), 1)}; ` +
        `from ${SETTLE_MS / 1000} s after the restart ${f(perSecond(restartedAt + SETTLE_MS, end), 1)}; ` +
        `first run started after the restart ended ${f(firstAfter ?? Number.NaN)} ms after it`,
    );
  } finally {
    await system.stop();
    await nats.stop();
  }
}

await main();
