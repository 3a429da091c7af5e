import type { Manifest } from '../chart/render.ts';

/**
 * Turns a rendered Deployment's pod template into what it takes to run that
 * pod as a local process: the container's command, args and working
 * directory with the image's app directory mapped to the repository, its
 * environment resolved as the kubelet resolves it (envFrom, then env; secret
 * and field references; `$(VAR)` expansion), its ports moved to free local
 * ports, and its volumes to local directories.
 */

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly secretKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean };
    readonly configMapKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean };
    readonly fieldRef?: { readonly fieldPath: string };
    readonly resourceFieldRef?: { readonly resource: string };
  };
}

interface EnvFromSource {
  readonly prefix?: string;
  readonly secretRef?: { readonly name: string; readonly optional?: boolean };
  readonly configMapRef?: { readonly name: string; readonly optional?: boolean };
}

interface ProbeSpec {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
}

interface ContainerSpec {
  readonly name: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly workingDir?: string;
  readonly env?: readonly EnvVar[];
  readonly envFrom?: readonly EnvFromSource[];
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[];
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string }[];
  readonly startupProbe?: ProbeSpec;
  readonly readinessProbe?: ProbeSpec;
  readonly livenessProbe?: ProbeSpec;
}

interface VolumeSpec {
  readonly name: string;
  readonly emptyDir?: unknown;
  readonly secret?: { readonly secretName: string; readonly items?: readonly { key: string; path: string }[]; readonly optional?: boolean };
}

/** A Deployment as far as running its pods needs it. */
export interface DeploymentManifest extends Manifest {
  readonly spec: {
    readonly replicas?: number;
    readonly template: { readonly spec: { readonly containers: readonly ContainerSpec[]; readonly volumes?: readonly VolumeSpec[] } };
  };
}

/** An HTTP probe, pointed at the local port. */
export interface LocalProbe {
  readonly path: string;
  readonly port: number;
}

/** Everything needed to start one pod's (single) container as a local process. */
export interface PodPlan {
  readonly podName: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Container port name (or number as text) → the local port it was moved to. */
  readonly ports: Readonly<Record<string, number>>;
  readonly startupProbe?: LocalProbe;
  readonly readinessProbe?: LocalProbe;
  readonly livenessProbe?: LocalProbe;
  /** Local directories standing in for the pod's volumes, by mount path. */
  readonly volumes: Readonly<Record<string, string>>;
}

/** What the local machine provides in place of the cluster. */
export interface PodEnvironment {
  readonly podName: string;
  readonly namespace: string;
  /** The image's working directory (`/app`) and where it is here (the repository). */
  readonly imageAppDir: string;
  readonly localAppDir: string;
  /** The `node` of the image → this machine's node binary. */
  readonly nodeBinary: string;
  /** A Secret's key, as the operator's Secret would hold it; undefined when absent. */
  secretValue(secretName: string, key: string): string | undefined;
  /** Every key of a Secret (for `envFrom`); undefined when there is no such Secret. */
  secretData(secretName: string): Readonly<Record<string, string>> | undefined;
  /** A ConfigMap's data; undefined when there is none. */
  configMapData(name: string): Readonly<Record<string, string>> | undefined;
  /** A free local port for a container port. */
  localPort(containerPort: number): number;
  /** A local directory for a volume (`emptyDir` or `secret`) mounted at `mountPath`. */
  localDirectory(volume: string, mountPath: string): string;
  /**
   * Replacements applied after resolution: a variable's new value, or
   * undefined to drop it (cluster DNS names → local addresses, a MongoDB
   * URL where none runs).
   */
  readonly overrides?: Readonly<Record<string, string | undefined>>;
}

function resolveField(path: string, environment: PodEnvironment): string {
  switch (path) {
    case 'metadata.name':
      return environment.podName;
    case 'metadata.namespace':
      return environment.namespace;
    case 'status.podIP':
    case 'status.hostIP':
      return '127.0.0.1';
    case 'spec.nodeName':
      return 'localhost';
    default:
      throw new Error(`fieldRef ${path} is not supported by the local runner`);
  }
}

/** Kubernetes' `$(VAR)` expansion: a defined variable is replaced, `$$` escapes, anything else stays. */
function expand(value: string, env: Readonly<Record<string, string>>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][\w.-]*)\)/g, (match, name: string | undefined) =>
    name === undefined ? '$' : (env[name] ?? match),
  );
}

function resolveVariable(variable: EnvVar, env: Record<string, string>, environment: PodEnvironment): string | undefined {
  if (variable.value !== undefined) return expand(variable.value, env);
  const from = variable.valueFrom;
  if (from?.fieldRef !== undefined) return resolveField(from.fieldRef.fieldPath, environment);
  if (from?.secretKeyRef !== undefined) {
    const { name, key, optional } = from.secretKeyRef;
    const value = environment.secretValue(name, key);
    if (value === undefined && optional !== true) throw new Error(`${variable.name}: Secret ${name} has no key ${key}`);
    return value;
  }
  if (from?.configMapKeyRef !== undefined) {
    const { name, key, optional } = from.configMapKeyRef;
    const value = environment.configMapData(name)?.[key];
    if (value === undefined && optional !== true) throw new Error(`${variable.name}: ConfigMap ${name} has no key ${key}`);
    return value;
  }
  if (from?.resourceFieldRef !== undefined) return undefined;
  return '';
}

function resolveEnvironment(container: ContainerSpec, environment: PodEnvironment): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const data = source.secretRef !== undefined
      ? environment.secretData(source.secretRef.name)
      : source.configMapRef !== undefined
        ? environment.configMapData(source.configMapRef.name)
        : undefined;
    const optional = source.secretRef?.optional ?? source.configMapRef?.optional ?? false;
    if (data === undefined && !optional) throw new Error(`envFrom names a Secret or ConfigMap that does not exist`);
    for (const [key, value] of Object.entries(data ?? {})) env[`${source.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    const value = resolveVariable(variable, env, environment);
    if (value === undefined) delete env[variable.name];
    else env[variable.name] = value;
  }
  return env;
}

/** Rewrites a path under one of `mapping`'s keys to the same path under its value. */
function remapPath(value: string, mapping: Readonly<Record<string, string>>): string {
  for (const [from, to] of Object.entries(mapping).sort((a, b) => b[0].length - a[0].length)) {
    if (value === from || value.startsWith(`${from}/`)) return to + value.slice(from.length);
  }
  return value;
}

function localProbe(probe: ProbeSpec | undefined, ports: Readonly<Record<string, number>>): LocalProbe | undefined {
  if (probe?.httpGet === undefined) return undefined;
  const port = ports[String(probe.httpGet.port)];
  if (port === undefined) throw new Error(`a probe names port ${probe.httpGet.port}, which the container does not declare`);
  return { path: probe.httpGet.path, port };
}

/** The local plan of one pod of `deployment` (its first container). */
export function planPod(deployment: DeploymentManifest, environment: PodEnvironment): PodPlan {
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  if (container === undefined) throw new Error(`Deployment ${deployment.metadata.name} has no container`);
  if (container.command === undefined || container.command.length === 0) {
    throw new Error(`Deployment ${deployment.metadata.name}: the local runner needs an explicit command`);
  }

  const ports: Record<string, number> = {};
  const portValues = new Map<string, string>();
  for (const port of container.ports ?? []) {
    const local = environment.localPort(port.containerPort);
    ports[String(port.containerPort)] = local;
    if (port.name !== undefined) ports[port.name] = local;
    portValues.set(String(port.containerPort), String(local));
  }

  const volumes: Record<string, string> = {};
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.volumes?.find((candidate) => candidate.name === mount.name);
    if (volume?.emptyDir === undefined && volume?.secret === undefined) {
      throw new Error(`volume ${mount.name}: only emptyDir and secret volumes run locally`);
    }
    volumes[mount.mountPath] = environment.localDirectory(mount.name, mount.mountPath);
  }
  const paths = { ...volumes, [environment.imageAppDir]: environment.localAppDir };

  const env = resolveEnvironment(container, environment);
  for (const [name, value] of Object.entries(env)) {
    // A container port the process is told to listen on moves with the port.
    if (/PORT$/.test(name) && portValues.has(value)) env[name] = portValues.get(value) ?? value;
    else env[name] = remapPath(value, paths);
  }
  for (const [name, value] of Object.entries(environment.overrides ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }

  const [program = '', ...commandArgs] = container.command;
  const args = [...commandArgs, ...(container.args ?? [])].map((arg) => remapPath(expand(arg, env), paths));
  const plan: PodPlan = {
    podName: environment.podName,
    command: program === 'node' ? environment.nodeBinary : program,
    args,
    cwd: remapPath(container.workingDir ?? environment.imageAppDir, paths),
    env,
    ports,
    volumes,
  };
  const startupProbe = localProbe(container.startupProbe, ports);
  const readinessProbe = localProbe(container.readinessProbe, ports);
  const livenessProbe = localProbe(container.livenessProbe, ports);
  return {
    ...plan,
    ...(startupProbe === undefined ? {} : { startupProbe }),
    ...(readinessProbe === undefined ? {} : { readinessProbe }),
    ...(livenessProbe === undefined ? {} : { livenessProbe }),
  };
}
