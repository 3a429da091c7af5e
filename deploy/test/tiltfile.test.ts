import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseTiltfile, unresolvedCalls } from '../src/index.ts';
import type { Manifest, TiltCall, TiltValue } from '../src/index.ts';
import { ROOT, SERVICES, render } from './chart-support.ts';

const tiltfile = parseTiltfile(readFileSync(join(ROOT, 'Tiltfile'), 'utf8'));

function callsNamed(...names: string[]): TiltCall[] {
  return tiltfile.calls.filter((call) => names.includes(call.name));
}

function strings(value: TiltValue | undefined): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap((item) => strings(item));
  return [];
}

function argument(call: TiltCall, index: number, keyword: string): TiltValue | undefined {
  return call.args[index] ?? call.kwargs[keyword];
}

const imageBuilds = callsNamed('docker_build', 'docker_build_with_restart', 'custom_build');
const [chartCall] = callsNamed('helm');

describe('the Tiltfile', () => {
  let manifests: Manifest[] = [];

  beforeAll(async () => {
    const set: Record<string, string> = {};
    for (const pair of strings(chartCall?.kwargs.set)) {
      const [key, ...value] = pair.split('=');
      set[key ?? ''] = value.join('=');
    }
    const name = chartCall?.kwargs.name;
    manifests = await render({
      chartDir: join(ROOT, strings(chartCall?.args[0])[0] ?? 'missing'),
      ...(typeof name === 'string' ? { releaseName: name } : {}),
      valuesFiles: strings(chartCall?.kwargs.values).map((file) => join(ROOT, file)),
      set,
    });
  });

  it('loads every extension function it calls (helm_resource was once called unloaded)', () => {
    expect(unresolvedCalls(tiltfile).map((call) => `${call.name} (line ${call.line})`)).toEqual([]);
    for (const module of tiltfile.loaded.values()) expect(module).toMatch(/^ext:\/\/[\w-]+$/);
  });

  it('builds the one image from the Dockerfile, with live update from sources that exist', () => {
    expect(imageBuilds).toHaveLength(1);
    const [build] = imageBuilds;
    const context = strings(argument(build!, 1, 'context'))[0] ?? '';
    expect(existsSync(join(ROOT, context))).toBe(true);
    expect(existsSync(join(ROOT, context, strings(build!.kwargs.dockerfile)[0] ?? 'Dockerfile'))).toBe(true);
    const syncs = callsNamed('sync');
    expect(syncs.length).toBeGreaterThan(0);
    for (const sync of syncs) {
      const [source, target] = sync.args;
      expect(existsSync(join(ROOT, strings(source)[0] ?? 'missing')), `sync ${String(source)}`).toBe(true);
      expect(strings(target)[0]).toMatch(/^\/app\//);
    }
  });

  it('deploys the chart that exists, and every file it watches or reads exists', () => {
    expect(chartCall).toBeDefined();
    const paths = [
      ...strings(chartCall?.args[0]),
      ...strings(chartCall?.kwargs.values),
      ...callsNamed('read_file', 'watch_file', 'read_yaml', 'read_json').flatMap((call) => strings(call.args[0])),
      ...callsNamed('local_resource').flatMap((call) => strings(call.kwargs.deps)),
    ];
    for (const path of paths) expect(existsSync(join(ROOT, path)), path).toBe(true);
  });

  it('names as resources exactly the Deployments the chart renders, and depends only on resources it defines', () => {
    const deployments = manifests.filter((m) => m.kind === 'Deployment').map((m) => m.metadata.name);
    expect(deployments).toHaveLength(SERVICES.length);
    const defined = new Set([
      ...deployments,
      ...callsNamed('helm_resource', 'local_resource', 'k8s_custom_deploy').map((call) => strings(call.args[0])[0]),
    ]);
    const resources = callsNamed('k8s_resource');
    expect(resources.length).toBeGreaterThan(0);
    for (const resource of resources) {
      const name = strings(argument(resource, 0, 'workload'))[0];
      expect(defined.has(name), `k8s_resource ${name}`).toBe(true);
    }
    for (const call of tiltfile.calls) {
      for (const dependency of strings(call.kwargs.resource_deps)) {
        expect(defined.has(dependency), `${call.name} depends on ${dependency}`).toBe(true);
      }
    }
  });

  it('builds the image the chart runs', () => {
    const image = strings(argument(imageBuilds[0]!, 0, 'ref'))[0];
    const images = manifests
      .filter((m) => m.kind === 'Deployment')
      .flatMap((m) => (m as Manifest & { spec: { template: { spec: { containers: { image: string }[] } } } }).spec.template.spec.containers)
      .map((container) => container.image.replace(/:[^:/]+$/, ''));
    expect(new Set(images)).toEqual(new Set([image]));
  });
});
