/**
 * Builds the SDK and packs it with `npm pack`: prints the tarball's path.
 *
 *   node libs/client/scripts/pack.ts [--out-dir DIR] [--pack-destination DIR]
 *
 * Defaults: the build in `.tmp/sdk/dist`, the tarball in `.tmp/sdk`.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_OUT_DIR, build, option } from './build.ts';

/** Builds into `outDir` and packs into `destination`; returns the tarball's absolute path. */
export async function pack(
  outDir: string = DEFAULT_OUT_DIR,
  destination: string = path.dirname(outDir),
): Promise<string> {
  await build(outDir);
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: outDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [packed] = JSON.parse(output) as { filename: string }[];
  if (!packed) throw new Error(`npm pack printed no tarball: ${output}`);
  return path.join(destination, packed.filename);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = path.resolve(option('--out-dir') ?? DEFAULT_OUT_DIR);
  const destination = path.resolve(option('--pack-destination') ?? path.dirname(outDir));
  process.stdout.write(`${await pack(outDir, destination)}\n`);
}
