import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';

const run = promisify(execFile);

/** One rendered Kubernetes object, as helm prints it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> };
  readonly [member: string]: unknown;
}

/** What to render: a chart and the values an operator would pass. */
export interface ChartInput {
  /** The helm binary ({@link ensureHelm}). */
  readonly helm: string;
  readonly chartDir: string;
  /** @default 'ars' */
  readonly releaseName?: string;
  /** @default 'default' */
  readonly namespace?: string;
  /** `-f` files, in order. */
  readonly valuesFiles?: readonly string[];
  /** `--set` pairs, after the files. */
  readonly set?: Readonly<Record<string, string>>;
}

/** A helm command that failed: its output says why. */
export class HelmError extends Error {
  readonly output: string;
  constructor(command: string, output: string) {
    super(`helm ${command} failed:\n${output}`);
    this.name = 'HelmError';
    this.output = output;
  }
}

interface Dependency {
  readonly name: string;
  readonly version: string;
}

/** A concrete version inside a dependency's constraint (`1.3.x`, `^1.3.0`, `>=1.2 <2`): its lowest bound. */
function versionWithin(constraint: string): string {
  const first = constraint.split(/\s|,|\|\|/).find((part) => /\d/.test(part)) ?? '0.0.0';
  const parts = first.replace(/^[^\d]*/, '').split('.').map((part) => (/^\d+$/.test(part) ? part : '0'));
  while (parts.length < 3) parts.push('0');
  return parts.slice(0, 3).join('.');
}

/**
 * A copy of the chart that helm can render without the network: every
 * declared dependency missing from `charts/` gets an empty stand-in chart of
 * the same name and version (no templates). Operators run `helm dependency
 * build` and get the real one; our checks are about this chart's own objects.
 */
export async function offlineChartCopy(chartDir: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'ars-chart-'));
  const dir = join(root, 'chart');
  await cp(chartDir, dir, { recursive: true });
  let chart: { dependencies?: Dependency[] } | null;
  try {
    chart = parse(await readFile(join(dir, 'Chart.yaml'), 'utf8')) as { dependencies?: Dependency[] } | null;
  } catch {
    // Left for helm to refuse, with its own message.
    chart = null;
  }
  for (const dependency of chart?.dependencies ?? []) {
    const target = join(dir, 'charts', dependency.name);
    if (existsSync(target)) continue;
    await mkdir(target, { recursive: true });
    const standIn = {
      apiVersion: 'v2',
      name: dependency.name,
      version: versionWithin(dependency.version),
      description: 'offline stand-in for the real dependency (helm dependency build fetches it)',
    };
    await writeFile(join(target, 'Chart.yaml'), stringify(standIn));
  }
  return { dir, remove: () => rm(root, { recursive: true, force: true }) };
}

function valueArguments(input: ChartInput): string[] {
  const args: string[] = [];
  for (const file of input.valuesFiles ?? []) args.push('-f', file);
  // --set types numbers and booleans as helm does; a comma would split the pair, so it is escaped.
  for (const [key, value] of Object.entries(input.set ?? {})) args.push('--set', `${key}=${value.replaceAll(',', '\\,')}`);
  return args;
}

async function helm(input: ChartInput, command: string, args: readonly string[]): Promise<string> {
  const copy = await offlineChartCopy(input.chartDir);
  try {
    const { stdout } = await run(input.helm, [command, ...args, copy.dir, ...valueArguments(input)], {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, HELM_CACHE_HOME: join(copy.dir, '..', 'cache'), HELM_CONFIG_HOME: join(copy.dir, '..', 'config') },
    });
    return stdout;
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new HelmError(command, `${failure.stdout ?? ''}${failure.stderr ?? failure.message}`.trim());
  } finally {
    await copy.remove();
  }
}

/** `helm lint --strict`: resolves with its output, or throws {@link HelmError} on any error or warning. */
export function lintChart(input: ChartInput): Promise<string> {
  return helm(input, 'lint', ['--strict']);
}

/** `helm template`: the rendered objects, in order (empty documents dropped). */
export async function renderChart(input: ChartInput): Promise<Manifest[]> {
  const output = await helm(input, 'template', [
    input.releaseName ?? 'ars',
    '--namespace',
    input.namespace ?? 'default',
  ]);
  const manifests: Manifest[] = [];
  for (const document of parseAllDocuments(output)) {
    if (document.errors.length > 0) throw new Error(`rendered YAML does not parse: ${document.errors[0]?.message}`);
    const object = document.toJS() as Manifest | null;
    if (object !== null) manifests.push(object);
  }
  return manifests;
}
