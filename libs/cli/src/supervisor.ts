import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBus, createRpcClient, findFreePort } from '@ars/bus';
import type { Bus, NatsServerHandle, RpcClient } from '@ars/bus';
import { SERVICE_NAMES } from '@ars/contracts';
import type { ServiceName } from '@ars/contracts';
import { formatChildLine, formatSupervisorLine } from './log-format.ts';
import type { LogFormatOptions } from './log-format.ts';
import { lockDataDir, startLocalNats } from './local-nats.ts';
import type { LocalNatsOptions } from './local-nats.ts';
import { keepLocalNats } from './nats-keeper.ts';
import type { NatsKeeper } from './nats-keeper.ts';
import { abortError, pollUntil, waitForHealth, waitForReadyz } from './readiness.ts';
import type { WaitBudget } from './readiness.ts';
import { describeExit, spawnServiceProcess } from './service-process.ts';
import type { ExitInfo, ServiceProcess } from './service-process.ts';
import { parseSystemOptions, restartPolicy } from './system-options.ts';
import type { LogEntry, RestartPolicy, StartSystemOptions, SystemOptions } from './system-options.ts';

/** The line the dev-mode gateway prints at boot. */
export const DEV_TOKEN_PREFIX = 'SERVICE_DEV_TOKEN=';

/** Start order: the six services, then the gateway last. */
export const START_ORDER: readonly ServiceName[] = [...SERVICE_NAMES.filter((name) => name !== 'gateway'), 'gateway'];

/** The one process of the one-process mode, which runs every service and the gateway. */
export const SYSTEM_PROCESS = 'system';

/** The composition root of the one-process mode, relative to the repository root. */
const ONE_PROCESS_ENTRY = join('deploy', 'src', 'one-process', 'main.ts');

/** A running system: every service in one process (or each in its own, `mode: 'split'`), plus its NATS. */
export interface RunningSystem {
  /** Where clients reach the gateway (`http://127.0.0.1:<port>`). */
  readonly baseUrl: string;
  /** The gateway's dev token (`SERVICE_DEV_TOKEN`); undefined in production auth mode. It changes when the gateway restarts. */
  readonly token: string | undefined;
  readonly natsUrl: string;
  /** The gateway's port (the chosen one when 0 was asked). */
  readonly port: number;
  readonly dataDir: string;
  /** The children's process ids by name (`nats-server` when spawned), for diagnostics and tests. */
  processes(): { readonly name: string; readonly pid: number }[];
  /** SIGTERMs the gateway, then the services, then nats-server, waiting for each (SIGKILL after the grace). Idempotent. */
  stop(): Promise<void>;
  /** Stops one child with `signal` (default SIGTERM) and resolves with its exit; no restart follows. Split mode only. */
  killService(name: ServiceName, signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** Starts one child again (after killService) and resolves when it answers. Split mode only. */
  startServiceProcess(name: ServiceName): Promise<void>;
}

/** How long the supervisor tries to reach NATS before it starts anything. */
const NATS_CONNECT_TIMEOUT_MS = 15_000;

const DEFAULT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Starts the whole system: its own nats-server unless `natsUrl` is given,
 * every service as a process (the gateway last), and resolves once each one
 * answers `_health` over NATS and the gateway answers `GET /readyz`.
 * A failed start stops whatever it started and rejects naming the service.
 */
export async function startSystem(input: StartSystemOptions): Promise<RunningSystem> {
  const options = parseSystemOptions(input);
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  let nats: NatsServerHandle | undefined;
  try {
    if (options.natsUrl === undefined) nats = await startLocalNats(dataDir, localNatsOptions(options));
    const port = options.port === 0 ? await findFreePort() : options.port;
    const supervisor = new Supervisor(options, { dataDir, port, nats, unlock, onLog: input.onLog });
    await supervisor.start(input.signal);
    return supervisor.handle();
  } catch (error) {
    await nats?.stop();
    await unlock();
    throw error;
  }
}

interface SupervisorContext {
  readonly dataDir: string;
  readonly port: number;
  readonly nats: NatsServerHandle | undefined;
  readonly unlock: () => Promise<void>;
  readonly onLog: ((entry: LogEntry) => void) | undefined;
}

class Supervisor {
  private readonly options: SystemOptions;
  private readonly context: SupervisorContext;
  private readonly natsUrl: string;
  private readonly baseUrl: string;
  private readonly format: LogFormatOptions;
  private readonly restart: RestartPolicy | undefined;
  private readonly procs = new Map<string, ServiceProcess>();
  private readonly expectedExits = new WeakSet<ServiceProcess>();
  private readonly crashCounts = new Map<string, number>();
  private readonly restartTimers = new Map<string, NodeJS.Timeout>();
  private readonly stopController = new AbortController();
  private readonly nats: NatsKeeper | undefined;
  private token: string | undefined;
  private tokenWaiter = Promise.withResolvers<string>();
  private running = false;
  private stopping: Promise<void> | undefined;
  private bus: Promise<Bus> | undefined;
  private rpc: RpcClient | undefined;
  private readonly killOnExit = (): void => {
    for (const proc of this.procs.values()) proc.signal('SIGKILL');
    // nats-server runs in its own process group: nothing else would stop it.
    this.nats?.current().kill();
  };

  constructor(options: SystemOptions, context: SupervisorContext) {
    this.options = options;
    this.context = context;
    this.natsUrl = options.natsUrl ?? context.nats?.url ?? '';
    this.baseUrl = `http://${connectableHost(options.host)}:${context.port}`;
    this.format = {
      color: options.color ?? process.stdout.isTTY === true,
      format: options.logFormat,
      prefixWidth: Math.max(...[...START_ORDER, SYSTEM_PROCESS].map((n) => n.length)),
    };
    this.restart = restartPolicy(options.restart);
    this.nats =
      context.nats &&
      keepLocalNats(context.nats, context.dataDir, localNatsOptions(options), (level, message) =>
        this.log(level, message),
      );
    // A supervisor that dies must not leave its children behind.
    process.on('exit', this.killOnExit);
  }

  async start(signal: AbortSignal | undefined): Promise<void> {
    const startup = new AbortController();
    const onAbort = (): void => startup.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) startup.abort();
    try {
      const budget = this.budget(startup.signal);
      await this.connectToNats(budget);
      for (const name of this.units()) this.spawn(name);
      await Promise.all(
        this.units().map((name) =>
          this.waitReady(name, this.procs.get(name) as ServiceProcess, budget).catch((error: unknown) => {
            startup.abort();
            throw error;
          }),
        ),
      );
      if (signal?.aborted) throw abortError('the gateway');
      this.running = true;
      if (this.restart) this.nats?.watch(this.restart);
    } catch (error) {
      await this.stop();
      throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  handle(): RunningSystem {
    const currentToken = (): string | undefined => this.token;
    return {
      baseUrl: this.baseUrl,
      get token() {
        return currentToken();
      },
      natsUrl: this.natsUrl,
      port: this.context.port,
      dataDir: this.context.dataDir,
      processes: () => this.processes(),
      stop: () => this.stop(),
      killService: (name, signal) => this.killService(name, signal),
      startServiceProcess: (name) => this.startServiceProcess(name),
    };
  }

  private processes(): { name: string; pid: number }[] {
    const list = [...this.procs.values()].flatMap((proc) =>
      proc.pid === undefined ? [] : [{ name: proc.name, pid: proc.pid }],
    );
    const nats = this.nats?.current();
    return nats && !this.stopping ? [...list, { name: 'nats-server', pid: nats.pid }] : list;
  }

  private budget(signal: AbortSignal): WaitBudget {
    const timeoutMs = this.options.readyTimeoutMs;
    return {
      deadline: Date.now() + timeoutMs,
      timeoutMs,
      signal: AbortSignal.any([signal, this.stopController.signal]),
    };
  }

  /** The processes of the mode: one per service (the gateway last), or the one that runs them all. */
  private units(): readonly string[] {
    return this.options.mode === 'split' ? START_ORDER : [SYSTEM_PROCESS];
  }

  /** Whether `name` is the process that serves the gateway (and prints its dev token). */
  private servesGateway(name: string): boolean {
    return name === 'gateway' || name === SYSTEM_PROCESS;
  }

  private spawn(name: string): ServiceProcess {
    if (this.servesGateway(name)) this.tokenWaiter = Promise.withResolvers<string>();
    const entry = name === SYSTEM_PROCESS ? ONE_PROCESS_ENTRY : join('services', name, 'src', 'main.ts');
    const proc = spawnServiceProcess({
      name,
      command: process.execPath,
      args: [...this.options.nodeFlags, entry],
      cwd: this.options.rootDir ?? DEFAULT_ROOT,
      env: this.childEnv(name),
      onLine: (stream, line) => this.onChildLine(name, stream, line),
    });
    this.procs.set(name, proc);
    void proc.exited.then((info) => this.onChildExit(name, proc, info));
    return proc;
  }

  private childEnv(name: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...this.options.env,
      NATS_URL: this.natsUrl,
      DATA_DIR: this.context.dataDir,
      INSTANCE_ID: `${name}-${randomUUID().slice(0, 8)}`,
    };
    // The one process gives each of its services an instance id of its own.
    if (name === SYSTEM_PROCESS) delete env['INSTANCE_ID'];
    // Only the given MongoDB: an inherited one would mix this system's data with another's.
    if (this.options.mongoUrl === undefined) delete env['MONGO_URL'];
    else env['MONGO_URL'] = this.options.mongoUrl;
    if (this.options.logLevel !== undefined) env['LOG_LEVEL'] = this.options.logLevel;
    // OAuth authorizations of MCP servers come back to this gateway unless the operator named its public URL.
    if (!env['OAUTH_REDIRECT_BASE_URL']) env['OAUTH_REDIRECT_BASE_URL'] = this.baseUrl;
    // Our own nats-server is a single one: an inherited count meant for a cluster would fail every boot.
    if (this.context.nats !== undefined) env['JETSTREAM_REPLICAS'] = '1';
    if (this.servesGateway(name)) {
      env['PORT'] = String(this.context.port);
      env['HOST'] = this.options.host;
    }
    return env;
  }

  private onChildLine(name: string, stream: 'stdout' | 'stderr', line: string): void {
    if (this.servesGateway(name) && stream === 'stdout' && line.startsWith(DEV_TOKEN_PREFIX)) {
      this.token = line.slice(DEV_TOKEN_PREFIX.length).trim();
      this.tokenWaiter.resolve(this.token);
      // At startup the caller prints the token itself; after a restart the new one is worth showing.
      if (!this.running) return;
    }
    const source = name === SYSTEM_PROCESS ? (serviceOfLine(line) ?? name) : name;
    this.emit({ source, stream, raw: line, text: formatChildLine(source, line, this.format) });
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    const stream = level === 'info' ? 'stdout' : 'stderr';
    this.emit({ source: 'ars', stream, raw: message, text: formatSupervisorLine(message, level, this.format) });
  }

  private emit(entry: LogEntry): void {
    if (this.context.onLog) return this.context.onLog(entry);
    (entry.stream === 'stdout' ? process.stdout : process.stderr).write(entry.text + '\n');
  }

  private async rpcClient(): Promise<RpcClient> {
    this.bus ??= connectBus({ servers: this.natsUrl, name: 'ars-supervisor' });
    const bus = await this.bus.catch((error: unknown) => {
      this.bus = undefined;
      throw error;
    });
    this.rpc ??= createRpcClient(bus);
    return this.rpc;
  }

  /** The supervisor's own connection comes first: an unreachable NATS is named as such, not as a service failure. */
  private async connectToNats(budget: WaitBudget): Promise<void> {
    const deadline = Math.min(budget.deadline, Date.now() + NATS_CONNECT_TIMEOUT_MS);
    for (;;) {
      try {
        await this.rpcClient();
        return;
      } catch (error) {
        if (budget.signal.aborted) throw abortError('NATS');
        if (Date.now() >= deadline)
          throw new Error(`cannot reach NATS at ${this.natsUrl}: ${(error as Error).message}`);
        await sleep(200);
      }
    }
  }

  private async waitReady(name: string, proc: ServiceProcess, budget: WaitBudget): Promise<void> {
    const rpc = await pollUntil(proc, `connect to NATS at ${this.natsUrl}`, budget, () =>
      this.rpcClient().catch(() => undefined),
    );
    const services = name === SYSTEM_PROCESS ? START_ORDER : [name];
    await Promise.all(services.map((service) => waitForHealth(rpc, proc, budget, service)));
    if (!this.servesGateway(name)) return;
    await waitForReadyz(this.baseUrl, proc, budget);
    if (this.childEnv(name)['ARS_AUTH_MODE'] === 'production') return;
    const waiter = this.tokenWaiter.promise;
    let seen = false;
    void waiter.then(() => (seen = true));
    await pollUntil(proc, `print ${DEV_TOKEN_PREFIX}<token> on stdout`, budget, async () => (seen ? true : undefined));
  }

  private onChildExit(name: string, proc: ServiceProcess, info: ExitInfo): void {
    if (this.procs.get(name) === proc) this.procs.delete(name);
    if (this.expectedExits.has(proc) || this.stopping || !this.running) return;
    const policy = this.restart;
    if (!policy) return this.log('error', `${name} ${describeExit(info)}`);
    const lived = Date.now() - proc.startedAt;
    const crashes = (lived >= policy.stableAfterMs ? 0 : (this.crashCounts.get(name) ?? 0)) + 1;
    this.crashCounts.set(name, crashes);
    if (crashes > policy.maxConsecutiveCrashes) {
      return this.log(
        'error',
        `${name} ${describeExit(info)}; it crashed ${crashes} times in a row, not restarting it`,
      );
    }
    const delayMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (crashes - 1));
    this.log(
      'warn',
      `${name} ${describeExit(info)}; restarting in ${delayMs / 1000}s (${crashes}/${policy.maxConsecutiveCrashes})`,
    );
    const timer = setTimeout(() => {
      this.restartTimers.delete(name);
      if (this.stopping) return;
      const next = this.spawn(name);
      this.waitReady(name, next, this.budget(new AbortController().signal)).then(
        () => this.log('info', `${name} restarted and answers again`),
        (error: unknown) => this.log('warn', `${name} restarted but is not ready: ${(error as Error).message}`),
      );
    }, delayMs);
    this.restartTimers.set(name, timer);
  }

  private async killService(name: ServiceName, signal: NodeJS.Signals = 'SIGTERM'): Promise<ExitInfo> {
    this.requireSplit('killService');
    this.cancelRestart(name);
    const proc = this.procs.get(name);
    if (!proc) throw new Error(`${name} is not running`);
    this.expectedExits.add(proc);
    if (signal === 'SIGKILL') {
      proc.signal('SIGKILL');
      return proc.exited;
    }
    return proc.terminate(signal, this.options.stopGraceMs);
  }

  private async startServiceProcess(name: ServiceName): Promise<void> {
    this.requireSplit('startServiceProcess');
    if (this.stopping) throw new Error('the system is stopping');
    if (this.procs.has(name)) throw new Error(`${name} is already running`);
    this.cancelRestart(name);
    const proc = this.spawn(name);
    try {
      await this.waitReady(name, proc, this.budget(new AbortController().signal));
    } catch (error) {
      this.expectedExits.add(proc);
      await proc.terminate('SIGTERM', this.options.stopGraceMs);
      throw error;
    }
  }

  private requireSplit(what: string): void {
    if (this.options.mode !== 'split') throw new Error(`${what} needs one process per service (mode: 'split')`);
  }

  private cancelRestart(name: string): void {
    const timer = this.restartTimers.get(name);
    if (timer) clearTimeout(timer);
    this.restartTimers.delete(name);
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    this.stopController.abort();
    for (const name of [...this.restartTimers.keys()]) this.cancelRestart(name);
    const grace = this.options.stopGraceMs;
    // The gateway first (no new work), then the services drain; the one process orders this itself.
    const gateway = this.procs.get('gateway');
    if (gateway) await gateway.terminate('SIGTERM', grace);
    await Promise.all([...this.procs.values()].map((proc) => proc.terminate('SIGTERM', grace)));
    const bus = await this.bus?.catch(() => undefined);
    await bus?.close().catch(() => undefined);
    await this.nats?.stop();
    await this.context.unlock();
    process.removeListener('exit', this.killOnExit);
  }
}

/** The service a pino line of the one process names (its logger stamps `service`), if any. */
function serviceOfLine(line: string): string | undefined {
  const match = /"service":"([a-z-]{1,32})"/.exec(line);
  return match?.[1];
}

/** How the system's own nats-server runs (when it spawns one). */
function localNatsOptions(options: SystemOptions): LocalNatsOptions {
  return {
    memoryLimitMiB: options.natsMemoryLimitMiB,
    ...(options.natsMonitorPort === undefined ? {} : { monitorPort: options.natsMonitorPort }),
  };
}

/** A wildcard listen address is reached through loopback. */
function connectableHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
