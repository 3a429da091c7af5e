import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The image installs production dependencies only. This walks the import
 * graph of the services' entry points, as Node would load it, and finds every
 * import that such an install would not satisfy: a package that the
 * importing file's own package.json does not list in `dependencies`.
 */

/** One import the production install would leave unresolved. */
export interface UndeclaredImport {
  /** The importing file, relative to the workspace root. */
  readonly file: string;
  /** The package imported. */
  readonly packageName: string;
  /** The manifest that should list it. */
  readonly manifest: string;
}

const BUILTINS = new Set(builtinModules);
// `import x from 'y'`, `export { x } from 'y'`, `import 'y'`, `import('y')`; `import type`/`export type` are erased at run time.
const IMPORT_PATTERN =
  /(?:^|\n)\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** The specifiers a source text loads at run time (type-only imports left out). */
export function runtimeSpecifiers(source: string): string[] {
  const specifiers = new Set<string>();
  for (const match of source.matchAll(IMPORT_PATTERN)) {
    const typeOnly = match[1] !== undefined;
    const specifier = match[2] ?? match[3];
    if (!typeOnly && specifier !== undefined) specifiers.add(specifier);
  }
  return [...specifiers];
}

interface Manifest {
  readonly name: string;
  readonly dir: string;
  readonly path: string;
  readonly dependencies: ReadonlySet<string>;
  readonly exports: Readonly<Record<string, string>>;
}

/** Reads package manifests, found upward from a file or by workspace package name. */
class Manifests {
  private readonly byDir = new Map<string, Manifest>();
  private readonly byName = new Map<string, Manifest>();

  async load(dir: string): Promise<Manifest> {
    const known = this.byDir.get(dir);
    if (known !== undefined) return known;
    const path = join(dir, 'package.json');
    const json = JSON.parse(await readFile(path, 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
      exports?: Record<string, string> | string;
    };
    const exportsMap = typeof json.exports === 'string' ? { '.': json.exports } : (json.exports ?? {});
    const manifest: Manifest = {
      name: json.name,
      dir,
      path,
      dependencies: new Set(Object.keys(json.dependencies ?? {})),
      exports: exportsMap,
    };
    this.byDir.set(dir, manifest);
    this.byName.set(manifest.name, manifest);
    return manifest;
  }

  async owning(file: string): Promise<Manifest> {
    let dir = dirname(file);
    while (!existsSync(join(dir, 'package.json'))) {
      const parent = dirname(dir);
      if (parent === dir) throw new Error(`no package.json above ${file}`);
      dir = parent;
    }
    return this.load(dir);
  }

  named(name: string): Manifest | undefined {
    return this.byName.get(name);
  }
}

/**
 * Every undeclared runtime import reachable from `entries` (absolute paths
 * of the services' `main.ts`). `workspaceDirs` are the directories of the
 * workspace packages, whose `exports` are followed like Node follows them.
 */
export async function undeclaredRuntimeImports(
  root: string,
  entries: readonly string[],
  workspaceDirs: readonly string[],
): Promise<UndeclaredImport[]> {
  const manifests = new Manifests();
  for (const dir of workspaceDirs) await manifests.load(dir);
  const problems: UndeclaredImport[] = [];
  const seen = new Set<string>();
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const owner = await manifests.owning(file);
    for (const specifier of runtimeSpecifiers(await readFile(file, 'utf8'))) {
      if (specifier.startsWith('.') || specifier.startsWith('/')) {
        queue.push(resolve(dirname(file), specifier));
        continue;
      }
      if (specifier.startsWith('node:') || specifier.startsWith('#')) continue;
      const name = packageNameOf(specifier);
      if (BUILTINS.has(name)) continue;
      if (name !== owner.name && !owner.dependencies.has(name)) {
        problems.push({ file: relative(root, file), packageName: name, manifest: relative(root, owner.path) });
      }
      const workspacePackage = manifests.named(name);
      if (workspacePackage !== undefined) {
        const subpath = `.${specifier.slice(name.length)}`;
        const target = workspacePackage.exports[subpath];
        if (target !== undefined) queue.push(join(workspacePackage.dir, target));
      }
    }
  }
  return problems;
}
