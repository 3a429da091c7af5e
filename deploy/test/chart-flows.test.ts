import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { HelmError, validateManifests } from '../src/index.ts';
import type { Manifest } from '../src/index.ts';
import { SERVICES, deploymentOf, envOf, ofKind, render } from './chart-support.ts';

/**
 * The chart's flow definitions (`flows.definitions`): one ConfigMap of JSON
 * files mounted into the run-executor as FLOWS_DIR, laid out
 * `<tenant>/<flow_id>.json`; nothing of it without definitions.
 */

const DEFINITIONS = {
  acme: {
    summarize: { name: 'Summarize', steps: [{ id: 'a', type: 'run', query: 'summarize {{input.text}}' }] },
    fan: {
      steps: [{ id: 'f', type: 'parallel', branches: [{ query: 'left' }, { query: 'right' }] }],
      budget: { steps: 4 },
    },
  },
  globex: { triage: { steps: [{ id: 't', type: 'run', query: 'triage' }] } },
};

interface ConfigMapVolume {
  readonly name: string;
  readonly configMap?: { name: string; items: { key: string; path: string }[] };
}

describe('flows in the chart', () => {
  let dir: string;
  let manifests: Manifest[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-chart-flows-'));
    const values = join(dir, 'flows.yaml');
    await writeFile(values, stringify({ flows: { definitions: DEFINITIONS, reloadMs: 2000 } }));
    manifests = await render({ valuesFiles: [values] });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('renders one ConfigMap holding each definition as JSON', async () => {
    const [configMap] = ofKind(manifests, 'ConfigMap').filter((m) => m.metadata.name === 'ars-agent-run-service-flows');
    const data = (configMap as unknown as { data: Record<string, string> }).data;
    expect(Object.values(data).map((text) => JSON.parse(text) as unknown)).toEqual(
      expect.arrayContaining([DEFINITIONS.acme.summarize, DEFINITIONS.acme.fan, DEFINITIONS.globex.triage]),
    );
    expect(Object.keys(data)).toHaveLength(3);
    expect(await validateManifests(manifests)).toEqual([]);
  });

  it('mounts it into the run-executor as FLOWS_DIR, laid out <tenant>/<flow_id>.json', () => {
    const spec = deploymentOf(manifests, 'run-executor').spec.template.spec;
    const [container] = spec.containers;
    expect(envOf(container!)).toMatchObject({ FLOWS_DIR: '/etc/ars/flows', FLOWS_RELOAD_MS: '2000' });
    expect(container?.volumeMounts).toContainEqual({ name: 'flows', mountPath: '/etc/ars/flows', readOnly: true });
    const volume = (spec.volumes as ConfigMapVolume[] | undefined)?.find((v) => v.name === 'flows');
    expect(volume?.configMap?.items.map((i) => i.path).sort()).toEqual([
      'acme/fan.json',
      'acme/summarize.json',
      'globex/triage.json',
    ]);
    const [configMap] = ofKind(manifests, 'ConfigMap').filter((m) => m.metadata.name === volume?.configMap?.name);
    const keys = Object.keys((configMap as unknown as { data: Record<string, string> }).data).sort();
    expect(volume?.configMap?.items.map((i) => i.key).sort()).toEqual(keys);
  });

  it('gives no other service the flows', () => {
    for (const service of SERVICES.filter((s) => s !== 'run-executor')) {
      const [container] = deploymentOf(manifests, service).spec.template.spec.containers;
      expect(envOf(container!).FLOWS_DIR).toBeUndefined();
    }
  });

  it('renders neither ConfigMap nor FLOWS_DIR without definitions', async () => {
    const plain = await render();
    expect(ofKind(plain, 'ConfigMap').filter((m) => m.metadata.name.endsWith('-flows'))).toEqual([]);
    const [container] = deploymentOf(plain, 'run-executor').spec.template.spec.containers;
    expect(envOf(container!).FLOWS_DIR).toBeUndefined();
  });

  it('refuses a tenant name that is no safe path segment', async () => {
    const values = join(dir, 'bad.yaml');
    await writeFile(values, stringify({ flows: { definitions: { '../etc': { x: { steps: [{}] } } } } }));
    await expect(render({ valuesFiles: [values] })).rejects.toThrow(HelmError);
  });
});
