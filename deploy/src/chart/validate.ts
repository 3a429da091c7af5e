import type { Manifest } from './render.ts';

/**
 * Validates rendered objects against the Kubernetes API's JSON schemas, as
 * the `kubernetes-models` packages carry them (and KEDA's CRDs through
 * `@kubernetes-models/keda`, the Prometheus Operator's through
 * `@kubernetes-models/prometheus-operator`): required members, types, formats. An object of
 * a kind we have no schema for is an error too, so nothing goes unchecked.
 */

interface ModelClass {
  new (data: unknown): { validate(): void };
}

/** Module of each API group/version whose kinds the chart may render. */
const MODEL_MODULES: Readonly<Record<string, () => Promise<Record<string, unknown>>>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'policy/v1': () => import('kubernetes-models/policy/v1'),
  'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
  'keda.sh/v1alpha1': () => import('@kubernetes-models/keda/keda.sh/v1alpha1'),
  'monitoring.coreos.com/v1': () => import('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'),
};

/** One object that failed, named `Kind/name`. */
export interface ManifestProblem {
  readonly object: string;
  readonly message: string;
}

async function modelOf(manifest: Manifest): Promise<ModelClass | undefined> {
  const load = MODEL_MODULES[manifest.apiVersion];
  if (load === undefined) return undefined;
  const model = (await load())[manifest.kind];
  return typeof model === 'function' ? (model as ModelClass) : undefined;
}

/** Every problem of every object; empty when all are valid. */
export async function validateManifests(manifests: readonly Manifest[]): Promise<ManifestProblem[]> {
  const problems: ManifestProblem[] = [];
  for (const manifest of manifests) {
    const object = `${manifest.kind}/${manifest.metadata?.name ?? '(unnamed)'}`;
    const Model = await modelOf(manifest);
    if (Model === undefined) {
      problems.push({ object, message: `no schema known for ${manifest.apiVersion} ${manifest.kind}` });
      continue;
    }
    try {
      new Model(manifest).validate();
    } catch (error) {
      problems.push({ object, message: (error as Error).message });
    }
  }
  return problems;
}
