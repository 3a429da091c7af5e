import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import { renderChart } from '../src/index.ts';
import type { ChartInput, Manifest } from '../src/index.ts';

/** Paths and helpers the chart tests share. */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const CHART_DIR = join(ROOT, 'deploy', 'helm', 'agent-run-service');
export const PRODUCTION_VALUES = join(ROOT, 'deploy', 'values-production.yaml');
export const SERVICES = ['gateway', 'run-executor', 'session', 'artifact', 'memory', 'governance', 'agent-registry'] as const;

/** The chart input for the pinned helm. */
export function chart(overrides: Partial<Omit<ChartInput, 'helm'>> = {}): ChartInput {
  return { helm: inject('helm'), chartDir: CHART_DIR, ...overrides };
}

export function render(overrides: Partial<Omit<ChartInput, 'helm'>> = {}): Promise<Manifest[]> {
  return renderChart(chart(overrides));
}

export interface Container {
  readonly name: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly workingDir?: string;
  readonly env?: { name: string; value?: string; valueFrom?: Record<string, Record<string, unknown>> }[];
  readonly ports?: { name?: string; containerPort: number }[];
  readonly startupProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly livenessProbe?: Probe;
  readonly securityContext?: Record<string, unknown>;
  readonly volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface Probe {
  readonly httpGet?: { path: string; port: string | number };
  readonly exec?: { command: string[] };
  readonly [member: string]: unknown;
}

export interface PodSpec {
  readonly containers: Container[];
  readonly volumes?: { name: string; emptyDir?: unknown; secret?: { secretName: string } }[];
  readonly securityContext?: Record<string, unknown>;
  readonly terminationGracePeriodSeconds?: number;
  readonly topologySpreadConstraints?: unknown[];
  readonly automountServiceAccountToken?: boolean;
}

export interface Deployment extends Manifest {
  readonly spec: { replicas?: number; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}

/** The Deployment of `service` (by its component label). */
export function deploymentOf(manifests: readonly Manifest[], service: string): Deployment {
  const found = manifests.find(
    (m) => m.kind === 'Deployment' && m.metadata.labels?.['app.kubernetes.io/component'] === service,
  );
  if (found === undefined) throw new Error(`no Deployment with component ${service}`);
  return found as Deployment;
}

export function ofKind(manifests: readonly Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

/** A container's env as name → value (or `<from secret:key>` for a secret reference). */
export function envOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const secret = variable.valueFrom?.secretKeyRef as { name: string; key: string } | undefined;
    env[variable.name] = variable.value ?? (secret === undefined ? '<from field>' : `<secret ${secret.key}>`);
  }
  return env;
}
