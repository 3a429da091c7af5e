import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateManifests } from '../src/index.ts';
import type { Manifest } from '../src/index.ts';
import { CHART_DIR, SERVICES, deploymentOf, ofKind, render } from './chart-support.ts';

/** The chart's monitoring: ServiceMonitor, PrometheusRule, dashboard ConfigMap, and KEDA on the exported lag. */

const MONITORING_ON = {
  'metrics.serviceMonitor.enabled': 'true',
  'metrics.serviceMonitor.labels.release': 'kube-prometheus',
  'metrics.prometheusRule.enabled': 'true',
  'metrics.grafanaDashboard.enabled': 'true',
};
const KEDA_PROMETHEUS = {
  'services.run-executor.autoscaling.enabled': 'true',
  'services.run-executor.autoscaling.keda.enabled': 'true',
  'services.run-executor.autoscaling.keda.trigger': 'prometheus',
  'services.run-executor.autoscaling.keda.prometheusServerAddress': 'http://prometheus.monitoring:9090',
};

interface Endpoint {
  readonly port: string;
  readonly path: string;
}

describe('the chart with monitoring on', () => {
  let manifests: Manifest[];

  beforeAll(async () => {
    manifests = await render({ set: { ...MONITORING_ON, ...KEDA_PROMETHEUS } });
  });

  it('validates against the Kubernetes, KEDA and Prometheus Operator schemas', async () => {
    expect(await validateManifests(manifests)).toEqual([]);
  });

  it('renders no monitoring object by default', async () => {
    const defaults = await render({});
    expect([...ofKind(defaults, 'ServiceMonitor'), ...ofKind(defaults, 'PrometheusRule')]).toEqual([]);
    expect(ofKind(defaults, 'ConfigMap')).toEqual([]);
  });

  it('scrapes /metrics on the named port of every Deployment through one headless Service', () => {
    const [monitor] = ofKind(manifests, 'ServiceMonitor') as (Manifest & {
      metadata: { labels: Record<string, string> };
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Endpoint[] };
    })[];
    expect(monitor?.metadata.labels.release).toBe('kube-prometheus');
    const service = ofKind(manifests, 'Service').find((s) =>
      Object.entries(monitor!.spec.selector.matchLabels).every(
        ([k, v]) => (s.metadata as { labels?: Record<string, string> }).labels?.[k] === v,
      ),
    ) as (Manifest & { spec: { clusterIP: string; ports: { name: string; targetPort: string }[] } }) | undefined;
    expect(service?.spec.clusterIP).toBe('None');
    const served = new Set(service?.spec.ports.map((p) => p.targetPort));
    for (const name of SERVICES) {
      const ports = deploymentOf(manifests, name).spec.template.spec.containers[0]?.ports ?? [];
      expect(
        ports.some((p) => served.has(p.name ?? '')),
        `${name} exposes a scraped port`,
      ).toBe(true);
    }
    // The gateway's /metrics wants a token: without gatewayBearerTokenSecret its endpoint is left out.
    expect(monitor?.spec.endpoints.map((e) => [e.port, e.path])).toEqual([['health', '/metrics']]);
  });

  it('scrapes the gateway with the bearer token of gatewayBearerTokenSecret', async () => {
    const withToken = await render({
      set: {
        ...MONITORING_ON,
        'metrics.serviceMonitor.gatewayBearerTokenSecret.name': 'ars-metrics-token',
        'metrics.serviceMonitor.gatewayBearerTokenSecret.key': 'token',
      },
    });
    expect(await validateManifests(withToken)).toEqual([]);
    const [monitor] = ofKind(withToken, 'ServiceMonitor') as (Manifest & {
      spec: { endpoints: (Endpoint & { authorization?: unknown })[] };
    })[];
    expect(monitor?.spec.endpoints).toEqual([
      expect.objectContaining({ port: 'health', path: '/metrics' }),
      expect.objectContaining({
        port: 'http',
        path: '/metrics',
        authorization: { type: 'Bearer', credentials: { name: 'ars-metrics-token', key: 'token' } },
      }),
    ]);
    expect(monitor?.spec.endpoints[0]).not.toHaveProperty('authorization');
  });

  it('refuses a gatewayBearerTokenSecret without its key', async () => {
    await expect(
      render({
        set: { ...MONITORING_ON, 'metrics.serviceMonitor.gatewayBearerTokenSecret.name': 'ars-metrics-token' },
      }),
    ).rejects.toThrow(/key/);
  });

  it('puts the alert rules file into the PrometheusRule as it is', async () => {
    const [rule] = ofKind(manifests, 'PrometheusRule') as (Manifest & { spec: unknown })[];
    const file = parse(await readFile(join(CHART_DIR, 'files', 'alerts.yaml'), 'utf8')) as {
      groups: { rules: { alert: string }[] }[];
    };
    expect(rule?.spec).toEqual(file);
    const alerts = file.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(alerts).toEqual(
      expect.arrayContaining([
        'ArsRunsQueueLagGrowing',
        'ArsHighErrorRate',
        'ArsExecutorSaturated',
        'ArsNatsDisconnected',
      ]),
    );
  });

  it('ships the dashboard JSON in a ConfigMap for the Grafana sidecar', async () => {
    const [map] = ofKind(manifests, 'ConfigMap') as (Manifest & {
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    })[];
    expect(map?.metadata.labels.grafana_dashboard).toBe('1');
    const file = await readFile(join(CHART_DIR, 'files', 'grafana-dashboard.json'), 'utf8');
    expect(JSON.parse(map?.data['agent-run-service.json'] ?? '')).toEqual(JSON.parse(file));
  });

  it('scales executors on the exported ars_runs_queue_lag with the KEDA prometheus trigger', () => {
    const [scaled] = ofKind(manifests, 'ScaledObject') as (Manifest & {
      spec: { triggers: { type: string; metadata: Record<string, string> }[] };
    })[];
    expect(scaled?.spec.triggers).toHaveLength(1);
    const [trigger] = scaled!.spec.triggers;
    expect(trigger?.type).toBe('prometheus');
    expect(trigger?.metadata.query).toContain('ars_runs_queue_lag');
    expect(trigger?.metadata.threshold).toBe('24');
    expect(trigger?.metadata.serverAddress).toBe('http://prometheus.monitoring:9090');
  });

  it('refuses the prometheus trigger without a server address', async () => {
    await expect(
      render({ set: { ...KEDA_PROMETHEUS, 'services.run-executor.autoscaling.keda.prometheusServerAddress': '' } }),
    ).rejects.toThrow(/prometheusServerAddress/);
  });
});
