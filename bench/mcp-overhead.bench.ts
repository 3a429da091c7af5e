/**
 * Benchmark (issue 26): what an MCP tool call costs beyond the server's own
 * round trip, for `@modelcontextprotocol/server-everything`'s `echo` over
 * stdio and over streamable HTTP, every process on this machine.
 *
 * 1. floor: a direct SDK client on the same transport calls `echo`: the
 *    server's own round trip, and the least any host can do.
 * 2. host:  `_mcp.call_tool` through agent-registry over NATS (`callInternal`,
 *    as run-executor calls it), against the whole system (`startTestSystem`).
 *    Also printed less the `server_ms` the host measured around the same call.
 * 3. run:   runs of a scripted agent that calls `everything__echo` `--per-run`
 *    times; per call, `tool.invoked` → `tool.completed` as the executor saw
 *    it: the event's `DurationMS` (whole ms), the gap between the two events'
 *    `occurred_at` (stored to the ms, no finer), and the gap between their
 *    arrivals on this client's SSE stream (sub-ms; delivery jitter included).
 *
 * Calls are sequential, one in flight, after `--warmup` unmeasured calls of
 * each path. Overhead = the path's p50 (or mean) less the floor's.
 *
 *   node bench/mcp-overhead.bench.ts [--calls 500] [--warmup 100] [--per-run 20] [--transport stdio|http|both]
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ArsClient } from '@ars/client';
import { callInternal, connectBus, createRpcClient } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import { MCP_CALL_TOOL } from '@ars/contracts';
import type { McpConnection } from '@ars/contracts';
import { MCP_EVERYTHING_ENTRY, mintToken, startMcpEverythingHttp, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { McpHttpServer, TestIdentity, TestSystem } from '@ars/testkit';
import { quantile } from './src/load.ts';
import { TERMINAL_TYPES } from './src/run-driver.ts';
import { openRunWatch } from './src/run-watch.ts';
import type { RunWatch } from './src/run-watch.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '500' },
    warmup: { type: 'string', default: '100' },
    'per-run': { type: 'string', default: '20' },
    transport: { type: 'string', default: 'both' },
  },
});
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
/** `echo` calls per run; the run's finish is one more step, within RUN_MAX_STEPS (25 by default). */
const PER_RUN = Number(values['per-run']);
if (!(PER_RUN >= 1 && PER_RUN <= 23)) throw new Error('--per-run takes 1 to 23 (RUN_MAX_STEPS is 25)');
const TRANSPORTS = values.transport === 'both' ? ['stdio', 'http'] : [values.transport];
if (!TRANSPORTS.every((t) => t === 'stdio' || t === 'http')) throw new Error('--transport takes stdio, http or both');

const EVERYTHING = MCP_EVERYTHING_ENTRY;
const SERVER_ID = 'everything';
const ARGS = { message: 'bench' };
/** How long the host may take for one call, and the RPC beyond it. */
const CALL_TIMEOUT_MS = 30_000;

const print = (line: string) => process.stdout.write(`${line}\n`);
const f = (n: number, digits = 2) => n.toFixed(digits);
const load = () => `load ${f(loadavg()[0] ?? 0)} on ${cpus().length} cores`;

interface Stats {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly mean: number;
  readonly n: number;
}

function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p: number) => quantile(sorted, p);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return { p50: q(0.5), p95: q(0.95), p99: q(0.99), mean, n: sorted.length };
}

function line(label: string, s: Stats): void {
  print(`  ${label.padEnd(42)} p50 ${f(s.p50)}  p95 ${f(s.p95)}  p99 ${f(s.p99)}  mean ${f(s.mean)} ms  (n=${s.n})`);
}

/**
 * The path's p50 and mean less the floor's. The two are measured apart, so
 * a difference of p99s is no p99 of anything: the tails are printed side by side.
 */
function overhead(label: string, path: Stats, floor: Stats): number {
  const p50 = path.p50 - floor.p50;
  print(
    `  overhead ${label.padEnd(33)} p50 ${f(p50)}  mean ${f(path.mean - floor.mean)} ms` +
      `  (p99 ${f(path.p99)} against the floor's ${f(floor.p99)})`,
  );
  return p50;
}

/** `count` sequential timed calls after `WARMUP` untimed ones; each call returns an extra figure or nothing. */
async function timed(count: number, call: () => Promise<number | void>): Promise<{ ms: number[]; extra: number[] }> {
  for (let i = 0; i < WARMUP; i++) await call();
  const ms: number[] = [];
  const extra: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const value = await call();
    ms.push(performance.now() - t0);
    if (typeof value === 'number') extra.push(value);
  }
  return { ms, extra };
}


/** 1. The server's own round trip: a direct SDK client, its own session (stdio: its own server process). */
async function floorPath(transport: Transport): Promise<Stats> {
  const client = new Client({ name: 'ars-bench', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport);
  try {
    const { ms } = await timed(CALLS, async () => {
      await client.callTool({ name: 'echo', arguments: ARGS });
    });
    return stats(ms);
  } finally {
    await client.close();
  }
}

/** 2. `_mcp.call_tool` as run-executor sends it; also each call less the host's own `server_ms`. */
async function hostPath(rpc: RpcClient, who: TestIdentity, agentId: string): Promise<{ all: Stats; less: Stats }> {
  let n = 0;
  const { ms, extra } = await timed(CALLS, async () => {
    const started = performance.now();
    const reply = await callInternal(
      rpc,
      MCP_CALL_TOOL,
      { ...who, scopes: [] },
      {
        ...who,
        agent_id: agentId,
        run: 'bench-host-path',
        server_id: SERVER_ID,
        tool: 'echo',
        arguments: ARGS,
        call_id: `bench-${agentId}-${n++}`,
        timeout_ms: CALL_TIMEOUT_MS,
      },
      { timeoutMs: CALL_TIMEOUT_MS * 2 },
    );
    if (reply.is_error) throw new Error(`echo failed on the host path: ${JSON.stringify(reply.content)}`);
    return performance.now() - started - reply.server_ms;
  });
  return { all: stats(ms), less: stats(extra) };
}

interface RunSamples {
  readonly durationMs: number[];
  readonly occurredMs: number[];
  readonly sseMs: number[];
}

/** One run of `PER_RUN` echo calls; its calls' times appended to `into` unless warming up. */
async function oneRun(owner: ArsClient, watch: RunWatch, agentId: string, into: RunSamples | undefined) {
  const query = `#script ${`tool:${SERVER_ID}__echo${JSON.stringify(ARGS)};`.repeat(PER_RUN)}finish:done`;
  const { task_id: run } = await owner.call<{ task_id: string }>('start', { identity: {}, agent_id: agentId, query });
  for (let i = 0; i < PER_RUN; i++) {
    const invoked = await watch.next(run, ['tool.invoked']);
    const done = await watch.next(run, ['tool.completed', 'tool.failed', ...TERMINAL_TYPES]);
    if (done.frame.type !== 'tool.completed')
      throw new Error(`run ${run}: ${done.frame.type} ${JSON.stringify(done.frame.payload)}`);
    if (into === undefined) continue;
    into.durationMs.push(Number(done.frame.payload['DurationMS']));
    into.occurredMs.push(Date.parse(done.frame.occurred_at) - Date.parse(invoked.frame.occurred_at));
    into.sseMs.push(done.at - invoked.at);
  }
  const end = await watch.next(run, TERMINAL_TYPES);
  watch.forget(run);
  if (end.frame.type !== 'task.completed') throw new Error(`run ${run} ended ${end.frame.type}`);
}

/** 3. Runs calling `everything__echo`: per-call `tool.invoked` → `tool.completed`. */
async function runPath(owner: ArsClient, session: string, agentId: string): Promise<Record<keyof RunSamples, Stats>> {
  const watch = await openRunWatch(owner, {
    session,
    types: ['tool.invoked', 'tool.completed', 'tool.failed', ...TERMINAL_TYPES],
  });
  try {
    for (let i = 0; i < Math.ceil(WARMUP / PER_RUN); i++) await oneRun(owner, watch, agentId, undefined);
    const samples: RunSamples = { durationMs: [], occurredMs: [], sseMs: [] };
    for (let i = 0; i < Math.ceil(CALLS / PER_RUN); i++) await oneRun(owner, watch, agentId, samples);
    return {
      durationMs: stats(samples.durationMs),
      occurredMs: stats(samples.occurredMs),
      sseMs: stats(samples.sseMs),
    };
  } finally {
    watch.close();
  }
}

interface Setup {
  readonly system: TestSystem;
  readonly rpc: RpcClient;
  readonly who: TestIdentity;
  readonly admin: ArsClient;
  readonly owner: ArsClient;
}

/** Floor, host and run paths of one transport; true when the run path's p50 overhead is under 2 ms. */
async function measure(setup: Setup, name: string, connection: McpConnection, floorTransport: () => Transport) {
  const agentId = `bench-mcp-${name}`;
  await setup.admin.call('agent_config.set_revision', {
    identity: {},
    agent_id: agentId,
    config: { mcp_connections: [connection] },
  });
  print(`${name} (${load()}):`);
  const floor = await floorPath(floorTransport());
  line('1 floor: SDK client → server', floor);
  const host = await hostPath(setup.rpc, setup.who, agentId);
  line('2 host: _mcp.call_tool over NATS', host.all);
  line('  host less its server_ms (same call)', host.less);
  const run = await runPath(setup.owner, setup.who.session, agentId);
  line('3 run: tool.completed DurationMS', run.durationMs);
  line('  run: occurred_at gap (ms resolution)', run.occurredMs);
  line('  run: SSE arrival gap', run.sseMs);
  overhead('2 − 1 (host)', host.all, floor);
  const byDuration = overhead('3 − 1 (run, DurationMS)', run.durationMs, floor);
  const bySse = overhead('3 − 1 (run, SSE gap)', run.sseMs, floor);
  const met = byDuration < 2 && bySse < 2;
  print(
    `  p50 overhead < 2 ms (issue 26): ${met ? 'yes' : 'no'} (DurationMS ${f(byDuration)}, SSE gap ${f(bySse)} ms)`,
  );
}

async function main(): Promise<void> {
  let http: McpHttpServer | undefined;
  let system: TestSystem | undefined;
  let bus: Awaited<ReturnType<typeof connectBus>> | undefined;
  try {
    if (TRANSPORTS.includes('http')) http = await startMcpEverythingHttp();
    system = await startTestSystem();
    bus = await connectBus({ servers: system.natsUrl, name: 'mcp-overhead-bench' });
    const who = uniqueIdentity('mcpb');
    const setup: Setup = {
      system,
      rpc: createRpcClient(bus),
      who,
      admin: system.client({ token: await mintToken(system.baseUrl, { ...who, scopes: ['admin'] }) }),
      owner: system.client({ token: await mintToken(system.baseUrl, who) }),
    };
    print(
      `MCP overhead benchmark: node ${process.version}, ${load()}, server-everything echo, ` +
        `${CALLS} calls per path after ${WARMUP} warm-up, ${PER_RUN} calls per run`,
    );
    for (const transport of TRANSPORTS) {
      if (transport === 'stdio') {
        await measure(
          setup,
          'stdio',
          { server_id: SERVER_ID, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
          () => new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
        );
      } else if (http !== undefined) {
        const url = http.url;
        await measure(
          setup,
          'http',
          { server_id: SERVER_ID, transport: 'streamable_http', url },
          () => new StreamableHTTPClientTransport(new URL(url)),
        );
      }
    }
  } finally {
    await bus?.close();
    // agent-registry kills the stdio servers it spawned as it stops.
    await system?.stop();
    await http?.stop();
  }
}

await main();
