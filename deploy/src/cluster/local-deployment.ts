import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeExit, spawnServiceProcess } from '@ars/cli';
import type { ServiceProcess } from '@ars/cli';
import { findFreePort } from '@ars/bus';
import type { Manifest } from '../chart/render.ts';
import { planPod } from './pod-plan.ts';
import type { DeploymentManifest, LocalProbe, PodPlan } from './pod-plan.ts';

/**
 * Runs what a chart renders as local processes, one per pod: each
 * Deployment's container command, args and environment exactly as rendered
 * ({@link planPod}), with the cluster's names replaced by local ones. A pod
 * counts as started once its startup probe and readiness probe answer 200,
 * as the kubelet would wait for them.
 */

/** A user the pods run as, as the image's `USER` does (needs root to switch). */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

export interface LocalDeploymentOptions {
  readonly manifests: readonly Manifest[];
  /** The repository: the image's app directory is mapped here. */
  readonly root: string;
  /** @default '/app' */
  readonly imageAppDir?: string;
  /** @default 'default' */
  readonly namespace?: string;
  /** Pods per Deployment, by `app.kubernetes.io/component`; @default the Deployment's replicas, else 1. */
  readonly replicas?: Readonly<Record<string, number>>;
  /** Test values of Secret keys, whatever the Secret's name (they win over a rendered Secret's data). */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Variables replaced (or, with undefined, dropped) in every pod after resolution. */
  readonly overrides?: Readonly<Record<string, string | undefined>>;
  /**
   * Mount paths whose emptyDir the replicas of one Deployment share (for
   * example DATA_DIR, where the embedded store stands in for MongoDB).
   */
  readonly sharedMounts?: readonly string[];
  /** Run every pod as this user (root needed, and `setpriv`). @default the current user */
  readonly runAs?: RunAs;
  /** Variables the image sets (`ENV`), under the rendered ones. */
  readonly imageEnv?: Readonly<Record<string, string>>;
  /** Every output line of every pod. */
  readonly onLine?: (pod: string, line: string) => void;
  /** @default 90000 */
  readonly readyTimeoutMs?: number;
}

/** One pod, running as a local process. */
export interface LocalPod {
  readonly component: string;
  readonly podName: string;
  readonly plan: PodPlan;
  readonly process: ServiceProcess;
  /** SIGKILL: a crash, as an OOM kill or a node loss would do it. */
  kill(): void;
  /** SIGTERM, then SIGKILL after `graceMs`, as a pod deletion. */
  terminate(graceMs: number): Promise<void>;
  /** Starts the container again (same pod, same volumes) and waits for its probes, as the kubelet's restart. */
  restart(): Promise<void>;
  /** GETs one of its probes: the status code, or 0 when nothing answers. */
  probe(probe: LocalProbe): Promise<number>;
}

export interface LocalDeployment {
  readonly pods: readonly LocalPod[];
  /** The pods of one component. */
  podsOf(component: string): LocalPod[];
  /** Stops every pod (SIGTERM with grace) and removes their directories. Idempotent. */
  stop(): Promise<void>;
}

const COMPONENT_LABEL = 'app.kubernetes.io/component';
/** Restarts of a container that exits before it is ready, before the start is given up. */
const MAX_START_RESTARTS = 5;

function componentOf(manifest: Manifest): string {
  const labels = (manifest as { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }).spec?.template
    ?.metadata?.labels;
  return labels?.[COMPONENT_LABEL] ?? manifest.metadata.labels?.[COMPONENT_LABEL] ?? manifest.metadata.name;
}

function renderedSecrets(manifests: readonly Manifest[]): Map<string, Record<string, string>> {
  const secrets = new Map<string, Record<string, string>>();
  for (const manifest of manifests.filter((m) => m.kind === 'Secret')) {
    const { data, stringData } = manifest as { data?: Record<string, string>; stringData?: Record<string, string> };
    const decoded: Record<string, string> = {};
    for (const [key, value] of Object.entries(data ?? {})) decoded[key] = Buffer.from(value, 'base64').toString('utf8');
    secrets.set(manifest.metadata.name, { ...decoded, ...stringData });
  }
  return secrets;
}

function renderedConfigMaps(manifests: readonly Manifest[]): Map<string, Record<string, string>> {
  return new Map(
    manifests
      .filter((m) => m.kind === 'ConfigMap')
      .map((m) => [m.metadata.name, { ...((m as { data?: Record<string, string> }).data ?? {}) }]),
  );
}

async function httpStatus(probe: LocalProbe): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${probe.port}${probe.path}`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** Starts every Deployment's pods, all at once as a rollout would, and waits until each is ready. */
export async function startLocalDeployment(options: LocalDeploymentOptions): Promise<LocalDeployment> {
  const base = await mkdtemp(join(tmpdir(), 'ars-pods-'));
  if (options.runAs !== undefined) await chown(base, options.runAs.uid, options.runAs.gid);
  const secrets = renderedSecrets(options.manifests);
  const configMaps = renderedConfigMaps(options.manifests);
  const testSecrets = options.secrets ?? {};
  const shared = new Set(options.sharedMounts ?? []);
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const pods: (LocalPod & { ready(): Promise<void> })[] = [];

  async function directory(path: string): Promise<string> {
    await mkdir(path, { recursive: true });
    if (options.runAs !== undefined) await chown(path, options.runAs.uid, options.runAs.gid);
    return path;
  }

  async function planFor(deployment: DeploymentManifest, component: string, index: number): Promise<PodPlan> {
    const podName = `${deployment.metadata.name}-${randomBytes(4).toString('hex')}-${index}`;
    const volumes = new Map<string, string>();
    const ports = new Map<number, number>();
    for (const port of deployment.spec.template.spec.containers[0]?.ports ?? []) ports.set(port.containerPort, await findFreePort());
    for (const mount of deployment.spec.template.spec.containers[0]?.volumeMounts ?? []) {
      const owner = shared.has(mount.mountPath) ? component : podName;
      volumes.set(mount.mountPath, await directory(join(base, owner, mount.name)));
    }
    const lookupSecret = (name: string, key: string): string | undefined => testSecrets[key] ?? secrets.get(name)?.[key];
    const plan = planPod(deployment, {
      podName,
      namespace: options.namespace ?? 'default',
      imageAppDir: options.imageAppDir ?? '/app',
      localAppDir: options.root,
      nodeBinary: process.execPath,
      secretValue: lookupSecret,
      secretData: (name) => {
        const rendered = secrets.get(name);
        return rendered === undefined ? undefined : Object.fromEntries(Object.keys(rendered).map((key) => [key, lookupSecret(name, key) ?? '']));
      },
      configMapData: (name) => configMaps.get(name),
      localPort: (containerPort) => ports.get(containerPort) ?? containerPort,
      localDirectory: (_volume, mountPath) => volumes.get(mountPath) ?? '',
      ...(options.overrides === undefined ? {} : { overrides: options.overrides }),
    });
    await writeSecretVolumes(deployment, plan, lookupSecret);
    return plan;
  }

  async function writeSecretVolumes(
    deployment: DeploymentManifest,
    plan: PodPlan,
    lookupSecret: (name: string, key: string) => string | undefined,
  ): Promise<void> {
    const container = deployment.spec.template.spec.containers[0];
    for (const mount of container?.volumeMounts ?? []) {
      const volume = deployment.spec.template.spec.volumes?.find((v) => v.name === mount.name);
      if (volume?.secret === undefined) continue;
      const dir = plan.volumes[mount.mountPath] ?? '';
      const items = volume.secret.items ?? Object.keys(secrets.get(volume.secret.secretName) ?? {}).map((key) => ({ key, path: key }));
      for (const item of items) {
        const value = lookupSecret(volume.secret.secretName, item.key);
        if (value === undefined) {
          if (volume.secret.optional === true) continue;
          throw new Error(`secret volume ${mount.name}: no value for key ${item.key}`);
        }
        const file = join(dir, item.path);
        await writeFile(file, value, { mode: 0o400 });
        if (options.runAs !== undefined) await chown(file, options.runAs.uid, options.runAs.gid);
      }
    }
  }

  function spawnPod(component: string, plan: PodPlan): ServiceProcess {
    const runAs = options.runAs;
    const command = runAs === undefined ? plan.command : 'setpriv';
    const args = runAs === undefined
      ? plan.args
      : [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--', plan.command, ...plan.args];
    return spawnServiceProcess({
      name: plan.podName,
      command,
      args,
      cwd: plan.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base, ...options.imageEnv, ...plan.env },
      onLine: (_stream, line) => options.onLine?.(plan.podName, line),
      keepLines: 60,
    });
  }

  /**
   * Waits for a pod's startup and readiness probes. A container that exits
   * first is started again after a pause, as the kubelet restarts it
   * (restartPolicy Always), up to {@link MAX_START_RESTARTS} times within the
   * ready timeout: a service that cannot reach a JetStream still electing
   * its leaders exits, and comes up on a later try.
   */
  async function waitReady(component: string, plan: PodPlan, current: () => ServiceProcess, respawn: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + readyTimeoutMs;
    let restarts = 0;
    for (const probe of [plan.startupProbe, plan.readinessProbe]) {
      if (probe === undefined) continue;
      while ((await httpStatus(probe)) !== 200) {
        const child = current();
        if (child.exitInfo !== undefined) {
          if (restarts >= MAX_START_RESTARTS || Date.now() > deadline) {
            throw new Error(`${plan.podName} ${describeExit(child.exitInfo)} before it was ready, ${restarts + 1} times:\n${child.tail().join('\n')}`);
          }
          restarts += 1;
          await sleep(1_000 * restarts);
          await respawn();
          continue;
        }
        if (Date.now() > deadline) {
          throw new Error(`${plan.podName} (${component}) was not ready within ${readyTimeoutMs} ms:\n${child.tail().join('\n')}`);
        }
        await sleep(200);
      }
    }
  }

  function localPod(component: string, plan: PodPlan): LocalPod & { ready(): Promise<void> } {
    let child = spawnPod(component, plan);
    const respawn = async (): Promise<void> => {
      if (child.exitInfo === undefined) await child.terminate('SIGKILL', 0);
      await child.exited;
      child = spawnPod(component, plan);
    };
    const ready = (): Promise<void> => waitReady(component, plan, () => child, respawn);
    return {
      component,
      podName: plan.podName,
      plan,
      get process() {
        return child;
      },
      kill: () => child.signal('SIGKILL'),
      terminate: async (graceMs) => {
        await child.terminate('SIGTERM', graceMs);
      },
      restart: async () => {
        await respawn();
        await ready();
      },
      probe: httpStatus,
      ready,
    };
  }

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await Promise.all(pods.map((pod) => pod.terminate(10_000).catch(() => undefined)));
      await rm(base, { recursive: true, force: true });
    })();
    return stopped;
  };

  try {
    for (const manifest of options.manifests.filter((m) => m.kind === 'Deployment')) {
      const deployment = manifest as DeploymentManifest;
      const component = componentOf(deployment);
      const count = options.replicas?.[component] ?? deployment.spec.replicas ?? 1;
      for (let index = 0; index < count; index++) pods.push(localPod(component, await planFor(deployment, component, index)));
    }
    await Promise.all(pods.map((pod) => pod.ready()));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    pods,
    podsOf: (component) => pods.filter((pod) => pod.component === component),
    stop,
  };
}

/**
 * Whether pods can run as `user` here: this process is root, `setpriv`
 * exists, and that user can read the repository and run this Node (a clone
 * under a private directory cannot be).
 */
export function canRunAs(root: string, user: RunAs = { uid: 65534, gid: 65534 }): boolean {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) return false;
  const probe = spawnSync(
    '/usr/bin/setpriv',
    [
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      '--clear-groups',
      '--',
      process.execPath,
      '-e',
      'require("node:fs").accessSync(process.argv[1], require("node:fs").constants.R_OK)',
      join(root, 'services', 'gateway', 'src', 'main.ts'),
    ],
    { stdio: 'ignore', timeout: 10_000 },
  );
  return probe.status === 0;
}
