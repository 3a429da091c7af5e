import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startNatsServer } from '@ars/bus';
import { MCP_EVERYTHING_ENTRY, startMcpEverythingHttp } from '@ars/testkit';
import type { McpHttpServer } from '@ars/testkit';
import type { NatsServerHandle } from '@ars/bus';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { agentRegistryService } from '../../src/service.ts';

/** The failing fixture server (run with node), and a wrapper that runs it as its child. */
export const FAULTY_SERVER = fileURLToPath(new URL('./fixtures/faulty-server.ts', import.meta.url));
export const WRAPPER = fileURLToPath(new URL('./fixtures/wrapper.ts', import.meta.url));

/** server-everything's entry (`node <it> stdio|sse|streamableHttp`). */
export const EVERYTHING = MCP_EVERYTHING_ENTRY;
/** Its npm bin, as an operator would configure it. */
export const EVERYTHING_BIN = fileURLToPath(new URL('../../node_modules/.bin/mcp-server-everything', import.meta.url));

/** A stdio connection to the failing fixture, named `name` (the name also marks its process). */
export function faulty(serverId: string, name = `faulty-${randomUUID()}`) {
  return { server_id: serverId, transport: 'stdio', command: process.execPath, args: [FAULTY_SERVER, name] };
}

/** The service (with `env`) on a spawned nats-server, with call helpers. */
export interface McpHarness {
  readonly service: InProcessService;
  /** The spawned nats-server's URL (for peer services a test starts). */
  readonly natsUrl: string;
  /** An admin of a fresh tenant (unless told). */
  caller(scopes?: string[], tenant?: string): VerifiedIdentity;
  call<T = Record<string, unknown>>(method: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<T>;
  outcome(method: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<CallOutcome>;
  /** Writes a head revision of `agentId` with these MCP connections. */
  configure(who: VerifiedIdentity, agentId: string, connections: readonly Record<string, unknown>[]): Promise<void>;
  /** `_mcp.call_tool` as `who` for its own run; the body's other members from `body`. */
  callTool(who: VerifiedIdentity, body: Record<string, unknown>): Promise<CallOutcome>;
  cancel(who: VerifiedIdentity, callId: string): Promise<CallOutcome>;
  events(tenant: string, type: string): Promise<EventFrame[]>;
  stop(): Promise<void>;
}

export async function startMcpHarness(env: Record<string, string> = {}): Promise<McpHarness> {
  const storeDir = await mkdtemp(join(tmpdir(), 'ars-agent-registry-mcp-'));
  let nats: NatsServerHandle | undefined;
  let service: InProcessService;
  try {
    nats = await startNatsServer({ storeDir });
    service = await startInProcess(agentRegistryService, {
      natsUrl: nats.url,
      env: { MCP_RESTART_BACKOFF_MS: '50', MCP_RESTART_BACKOFF_MAX_MS: '400', ...env },
    });
  } catch (error) {
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
  const started = nats;
  const call = <T>(method: string, body: Record<string, unknown>, who: VerifiedIdentity) =>
    service.call(method, { identity: {}, ...body }, who) as Promise<T>;
  const internal = (method: string, who: VerifiedIdentity, body: Record<string, unknown>, timeoutMs = 30_000) =>
    outcomeOf(
      service.rpc.call(
        'agent-registry',
        method,
        who,
        { tenant: who.tenant, user: who.user, session: who.session, ...body },
        { timeoutMs },
      ),
    );
  return {
    service,
    natsUrl: started.url,
    caller: (scopes = ['admin'], tenant = `t-${randomUUID()}`) => ({ tenant, user: 'alice', session: 's-1', scopes }),
    call,
    outcome: (method, body, who) => outcomeOf(call(method, body, who)),
    configure: async (who, agentId, connections) => {
      await call('agent_config.set_revision', { agent_id: agentId, config: { mcp_connections: connections } }, who);
    },
    callTool: (who, body) =>
      internal('_mcp.call_tool', who, {
        run: 'r-1',
        call_id: randomUUID(),
        arguments: {},
        timeout_ms: 10_000,
        ...body,
      }),
    cancel: (who, callId) => internal('_mcp.cancel_call', who, { call_id: callId }),
    events: (tenant, type) => storedEvents(service.bus, { tenant, type }),
    stop: async () => {
      await service.stop();
      await started.stop();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns a truthy value (a throw counts as not yet). */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`waitFor: timed out after ${timeoutMs} ms`, { cause: last });
    await sleep(25);
  }
}

/** The pids of processes whose command line contains `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** server-everything over HTTP (`streamableHttp` or `sse`) on a free port (see @ars/testkit). */
export type HttpServer = McpHttpServer;
export const startEverythingHttp = startMcpEverythingHttp;
