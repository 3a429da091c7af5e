import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HelmError, lintChart, validateManifests } from '../src/index.ts';
import type { Manifest } from '../src/index.ts';
import { CHART_DIR, PRODUCTION_VALUES, SERVICES, chart, deploymentOf, envOf, ofKind, render } from './chart-support.ts';

const KEDA_ON = {
  'services.run-executor.autoscaling.enabled': 'true',
  'services.run-executor.autoscaling.keda.enabled': 'true',
};
const HPA_ON = {
  'services.run-executor.autoscaling.enabled': 'true',
  'services.run-executor.autoscaling.keda.enabled': 'false',
};

/** The renders an operator would make: defaults, production, dev, and both autoscalers. */
const RENDERS: Record<string, Parameters<typeof render>[0]> = {
  defaults: {},
  production: { valuesFiles: [PRODUCTION_VALUES] },
  dev: { set: { 'auth.mode': 'dev' } },
  'autoscaling with KEDA': { set: KEDA_ON },
  'autoscaling with an HPA': { set: HPA_ON },
};

describe('the Helm chart', () => {
  const rendered = new Map<string, Manifest[]>();

  beforeAll(async () => {
    for (const [name, input] of Object.entries(RENDERS)) rendered.set(name, await render(input));
  });

  it('lints clean with --strict', async () => {
    await expect(lintChart(chart())).resolves.toBeTypeOf('string');
    await expect(lintChart(chart({ valuesFiles: [PRODUCTION_VALUES] }))).resolves.toBeTypeOf('string');
  });

  describe.each(Object.keys(RENDERS))('rendered with %s values', (name) => {
    const manifests = (): Manifest[] => rendered.get(name) ?? [];

    it('validates against the Kubernetes schemas (and KEDA’s)', async () => {
      expect(manifests().length).toBeGreaterThan(SERVICES.length);
      expect(await validateManifests(manifests())).toEqual([]);
    });

    it('has one Deployment per service, each with its startup, readiness and liveness probes', () => {
      expect(ofKind(manifests(), 'Deployment')).toHaveLength(SERVICES.length);
      for (const service of SERVICES) {
        const [container] = deploymentOf(manifests(), service).spec.template.spec.containers;
        for (const probe of [container?.startupProbe, container?.readinessProbe, container?.livenessProbe]) {
          expect(probe?.httpGet ?? probe?.exec, `${service} probe`).toBeDefined();
        }
        expect(container?.readinessProbe?.httpGet?.path).toBe('/readyz');
        expect(container?.livenessProbe?.httpGet?.path).toBe('/healthz');
        const portNames = (container?.ports ?? []).map((port) => port.name);
        expect(portNames).toContain(container?.readinessProbe?.httpGet?.port);
      }
    });

    it('writes nothing to the image: read-only root, non-root, no escalation, emptyDir only where written', () => {
      for (const service of SERVICES) {
        const pod = deploymentOf(manifests(), service).spec.template.spec;
        expect(pod.securityContext?.runAsNonRoot, service).toBe(true);
        expect(pod.automountServiceAccountToken, service).toBe(false);
        for (const container of pod.containers) {
          expect(container.securityContext).toMatchObject({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          });
          for (const mount of container.volumeMounts ?? []) {
            const volume = pod.volumes?.find((v) => v.name === mount.name);
            if (volume?.emptyDir === undefined) expect(mount.readOnly, `${service} ${mount.mountPath}`).toBe(true);
          }
          const env = envOf(container);
          const writable = (container.volumeMounts ?? []).filter(
            (m) => pod.volumes?.find((v) => v.name === m.name)?.emptyDir !== undefined,
          );
          expect(
            writable.map((m) => m.mountPath),
            `${service} DATA_DIR`,
          ).toContain(env.DATA_DIR);
        }
      }
    });

    it('runs each service as the image does: node on services/<service>/src/main.ts in /app', () => {
      for (const service of SERVICES) {
        const [container] = deploymentOf(manifests(), service).spec.template.spec.containers;
        expect(container?.workingDir).toBe('/app');
        expect(container?.command).toEqual(['node']);
        expect(container?.args?.at(-1)).toBe(`services/${service}/src/main.ts`);
        expect(container?.args).toContain('--max-semi-space-size=32');
      }
    });

    it('gives every service its NATS, its JetStream replica count and its instance id', () => {
      for (const service of SERVICES) {
        const env = envOf(deploymentOf(manifests(), service).spec.template.spec.containers[0]!);
        expect(env.NATS_URL, service).toMatch(/^nats:\/\//);
        expect(Number(env.JETSTREAM_REPLICAS), service).toBeGreaterThanOrEqual(1);
        expect(env.INSTANCE_ID, service).toBe('<from field>');
      }
    });

    it('gives every service its pod, namespace and node from the downward API (the k8s.* resource attributes)', () => {
      for (const service of SERVICES) {
        const container = deploymentOf(manifests(), service).spec.template.spec.containers[0]! as {
          env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
        };
        const fieldOf = (name: string) => container.env?.find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
        expect(fieldOf('K8S_POD_NAME'), service).toBe('metadata.name');
        expect(fieldOf('K8S_NAMESPACE_NAME'), service).toBe('metadata.namespace');
        expect(fieldOf('K8S_NODE_NAME'), service).toBe('spec.nodeName');
      }
    });

    it('takes every secret from a Secret, never from a plain value', () => {
      for (const service of SERVICES) {
        const env = envOf(deploymentOf(manifests(), service).spec.template.spec.containers[0]!);
        for (const name of ['MONGO_URL', 'GOVERNANCE_KEY_ENCRYPTION_KEY', 'LLM_API_KEY']) {
          if (env[name] !== undefined) expect(env[name], `${service} ${name}`).toMatch(/^<secret /);
        }
      }
      const governance = envOf(deploymentOf(manifests(), 'governance').spec.template.spec.containers[0]!);
      expect(governance.GOVERNANCE_KEY_ENCRYPTION_KEY).toBe('<secret governance-key-encryption-key>');
    });

    it('gives a PodDisruptionBudget to every service', () => {
      const budgets = ofKind(manifests(), 'PodDisruptionBudget') as (Manifest & {
        spec: { selector: { matchLabels: Record<string, string> } };
      })[];
      const components = budgets.map((b) => b.spec.selector.matchLabels['app.kubernetes.io/component']);
      expect(components.sort()).toEqual([...SERVICES].sort());
    });

    it('gives executors longer to stop than their drain takes', () => {
      const pod = deploymentOf(manifests(), 'run-executor').spec.template.spec;
      const env = envOf(pod.containers[0]!);
      const drainMs =
        Number(env.EXECUTOR_DRAIN_GRACE_MS ?? 20_000) + Number(env.EXECUTOR_DRAIN_UNSAFE_CALL_MS ?? 20_000);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drainMs / 1000 + 5);
      expect(pod.topologySpreadConstraints?.length).toBeGreaterThan(0);
    });
  });

  it('creates streams with three replicas by default, as the NATS cluster it expects has', () => {
    for (const service of SERVICES) {
      const env = envOf(deploymentOf(rendered.get('defaults')!, service).spec.template.spec.containers[0]!);
      expect(env.JETSTREAM_REPLICAS).toBe('3');
    }
  });

  it('scales executors with a KEDA ScaledObject on the RUNS consumers’ pending messages', () => {
    const manifests = rendered.get('autoscaling with KEDA')!;
    const [scaled] = ofKind(manifests, 'ScaledObject') as (Manifest & {
      spec: { scaleTargetRef: { name: string }; triggers: { type: string; metadata: Record<string, string> }[] };
    })[];
    const executor = deploymentOf(manifests, 'run-executor');
    expect(scaled?.spec.scaleTargetRef.name).toBe(executor.metadata.name);
    expect(scaled?.spec.triggers.map((t) => t.type)).toEqual(['nats-jetstream', 'nats-jetstream', 'nats-jetstream']);
    expect(scaled?.spec.triggers.map((t) => t.metadata.consumer).sort()).toEqual([
      'executors-high',
      'executors-low',
      'executors-normal',
    ]);
    for (const trigger of scaled?.spec.triggers ?? []) {
      expect(trigger.metadata).toMatchObject({ stream: 'RUNS' });
      expect(trigger.metadata.natsServerMonitoringEndpoint).toBeTruthy();
      expect(Number(trigger.metadata.lagThreshold)).toBeGreaterThan(0);
    }
    expect(executor.spec.replicas, 'the autoscaler owns the replica count').toBeUndefined();
    expect(ofKind(manifests, 'HorizontalPodAutoscaler')).toEqual([]);
  });

  it('falls back to a CPU HorizontalPodAutoscaler when KEDA is off', () => {
    const manifests = rendered.get('autoscaling with an HPA')!;
    expect(ofKind(manifests, 'ScaledObject')).toEqual([]);
    const [hpa] = ofKind(manifests, 'HorizontalPodAutoscaler') as (Manifest & {
      spec: { scaleTargetRef: { name: string }; metrics: { resource?: { name: string } }[] };
    })[];
    expect(hpa?.spec.scaleTargetRef.name).toBe(deploymentOf(manifests, 'run-executor').metadata.name);
    expect(hpa?.spec.metrics.map((m) => m.resource?.name)).toContain('cpu');
  });

  it('renders no autoscaler when autoscaling is off', () => {
    const manifests = rendered.get('defaults')!;
    expect(ofKind(manifests, 'ScaledObject')).toEqual([]);
    expect(ofKind(manifests, 'HorizontalPodAutoscaler')).toEqual([]);
  });

  it('uses an existing Secret when told to, and creates none', () => {
    const manifests = rendered.get('production')!;
    const governance = deploymentOf(manifests, 'governance').spec.template.spec.containers[0]!;
    const reference = governance.env?.find((v) => v.name === 'GOVERNANCE_KEY_ENCRYPTION_KEY')?.valueFrom
      ?.secretKeyRef as { name: string };
    expect(ofKind(manifests, 'Secret').map((s) => s.metadata.name)).not.toContain(reference.name);
  });

  it('creates a Secret with a generated key-encryption key when none is named', () => {
    const secrets = ofKind(rendered.get('defaults')!, 'Secret') as (Manifest & {
      data?: Record<string, string>;
      stringData?: Record<string, string>;
    })[];
    const key = secrets
      .map((s) => s.data?.['governance-key-encryption-key'] ?? s.stringData?.['governance-key-encryption-key'])
      .find(Boolean);
    expect(key).toBeTruthy();
  });

  describe('refuses values of the wrong type (values.schema.json)', () => {
    it.each([
      ['a replica count that is not a number', { 'gateway.replicas': 'two' }],
      ['an unknown auth mode', { 'auth.mode': 'open' }],
      ['a negative heap', { heapMiB: '-1' }],
      ['an unknown top-level value', { replicaz: '3' }],
    ])('%s', async (_name, set) => {
      await expect(render({ set })).rejects.toThrow(HelmError);
    });

    it('production auth without an issuer', async () => {
      await expect(render({ set: { 'auth.mode': 'production', 'auth.issuer': '' } })).rejects.toThrow(/issuer/i);
    });
  });

  it('fails the checks when Chart.yaml does not parse (as it once did)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ars-broken-chart-'));
    try {
      await cp(CHART_DIR, dir, { recursive: true });
      const original = await readFile(join(dir, 'Chart.yaml'), 'utf8');
      await writeFile(
        join(dir, 'Chart.yaml'),
        original.replace(/^description:.*$/m, 'description: Agent Run Service: broken'),
      );
      await expect(lintChart(chart({ chartDir: dir }))).rejects.toThrow(HelmError);
      await expect(render({ chartDir: dir })).rejects.toThrow(HelmError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  afterAll(() => rendered.clear());
});

describe('the chart README', () => {
  function leafPaths(value: unknown, prefix: string): string[] {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0)
      return [prefix];
    return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) =>
      leafPaths(child, prefix === '' ? key : `${prefix}.${key}`),
    );
  }

  it('lists every value of values.yaml', async () => {
    const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const readme = await readFile(join(CHART_DIR, 'README.md'), 'utf8');
    const missing = leafPaths(values, '').filter((path) => !readme.includes(`\`${path}\``));
    expect(missing).toEqual([]);
  });
});
