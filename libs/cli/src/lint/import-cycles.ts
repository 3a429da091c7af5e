import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Rule } from 'eslint';
import ts from 'typescript';

/**
 * The lint rule `ars/no-import-cycle`: no module imports itself back
 * through others, counting `import type` too. import-x/no-cycle ignores
 * type-only imports, and the cycles this workspace had were of that kind (a
 * class module importing its step modules, each importing the class's type
 * back): harmless at run time, but a module graph that cannot be read in
 * one direction. Relative imports and the workspace's own packages (named
 * in `pnpm-workspace.yaml`, through their `exports`) are followed; other
 * packages cannot import ours, so they are not.
 *
 * The graph is read once per process (each file's imports by TypeScript's
 * pre-processor, without type checking) and split into strongly connected
 * components; an import is reported when its target is in its file's
 * component. The linted file's own text replaces its copy on disk, so an
 * editor sees its edits; a change there rebuilds the graph.
 */

const SOURCE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];

interface WorkspacePackage {
  readonly dir: string;
  readonly exports: unknown;
}

/** The directory of the `pnpm-workspace.yaml` above `from`, else `from`. */
function workspaceRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/** The packages of the workspace at `root`, by name (none without a `pnpm-workspace.yaml`). */
function workspacePackages(root: string): Map<string, WorkspacePackage> {
  const packages = new Map<string, WorkspacePackage>();
  const manifestFile = join(root, 'pnpm-workspace.yaml');
  if (!existsSync(manifestFile)) return packages;
  for (const glob of packageGlobs(readFileSync(manifestFile, 'utf8'))) {
    const dirs = glob.endsWith('/*') ? listDirs(join(root, glob.slice(0, -2))) : [join(root, glob)];
    for (const dir of dirs) {
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; exports?: unknown };
      if (typeof pkg.name === 'string') packages.set(pkg.name, { dir, exports: pkg.exports });
    }
  }
  return packages;
}

/** The entries of the `packages:` list of a `pnpm-workspace.yaml` (`dir` or `dir/*`; negations skipped). */
function packageGlobs(manifest: string): string[] {
  const globs: string[] = [];
  let inPackages = false;
  for (const line of manifest.split('\n')) {
    if (/^\S/.test(line)) inPackages = /^packages:\s*$/.test(line);
    const entry = inPackages ? /^\s+-\s*['"]?([^'"\s#]+)['"]?/.exec(line)?.[1] : undefined;
    if (entry !== undefined && !entry.startsWith('!')) globs.push(entry);
  }
  return globs;
}

function listDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(dir, entry.name));
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

/** A relative import's file: as written, else with a source extension, else its directory's index. */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  if (isFile(base)) return base;
  const candidates = [
    ...SOURCE_EXTENSIONS.map((ext) => base + ext),
    ...SOURCE_EXTENSIONS.map((ext) => join(base, `index${ext}`)),
  ];
  if (base.endsWith('.js')) candidates.unshift(`${base.slice(0, -3)}.ts`);
  return candidates.find(isFile);
}

/** The file a workspace package's `exports` give for `subpath` (`.` or `./x`). */
function exportTarget(pkg: WorkspacePackage, subpath: string): string | undefined {
  const entry =
    typeof pkg.exports === 'string' && subpath === '.'
      ? pkg.exports
      : (pkg.exports as Record<string, unknown> | undefined)?.[subpath];
  const target =
    typeof entry === 'string'
      ? entry
      : ((entry as Record<string, unknown> | undefined)?.import ??
        (entry as Record<string, unknown> | undefined)?.default);
  if (typeof target !== 'string') return undefined;
  const file = resolve(pkg.dir, target);
  return isFile(file) ? file : undefined;
}

/** The module graph of one workspace: each file's imported files, and its strongly connected components. */
class ImportGraph {
  readonly #packages: ReadonlyMap<string, WorkspacePackage>;
  readonly #edges = new Map<string, Map<string, string>>();
  readonly #texts = new Map<string, string>();
  /** Component of each file already placed (Tarjan's algorithm, run from each file not yet placed). */
  readonly #component = new Map<string, number>();
  #components = 0;

  constructor(packages: ReadonlyMap<string, WorkspacePackage>) {
    this.#packages = packages;
  }

  /** The text this graph read for `file`. */
  textOf(file: string): string | undefined {
    return this.#texts.get(file);
  }

  /** The file `specifier` names from `from`, when it is one of the workspace's. */
  resolve(from: string, specifier: string): string | undefined {
    if (specifier.startsWith('.') || specifier.startsWith('/')) return resolveRelative(from, specifier);
    const parts = specifier.split('/');
    const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
    const pkg = this.#packages.get(name);
    if (pkg === undefined) return undefined;
    return exportTarget(pkg, `.${specifier.slice(name.length)}`);
  }

  /** The files `file` imports (type-only imports included), by specifier. */
  edges(file: string, text?: string): Map<string, string> {
    let edges = this.#edges.get(file);
    if (edges !== undefined) return edges;
    const source = text ?? readFileSync(file, 'utf8');
    this.#texts.set(file, source);
    edges = new Map();
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      const target = this.resolve(file, fileName);
      if (target !== undefined && target !== file) edges.set(fileName, target);
    }
    this.#edges.set(file, edges);
    return edges;
  }

  /** The component of `file`. */
  component(file: string): number {
    const known = this.#component.get(file);
    if (known !== undefined) return known;
    this.#place(file);
    return this.#component.get(file) ?? -1;
  }

  /** The shortest import path from `from` to `to` (both ends included), if any. */
  path(from: string, to: string): string[] | undefined {
    const previous = new Map<string, string>([[from, from]]);
    const queue = [from];
    while (queue.length > 0) {
      const file = queue.shift() as string;
      if (file === to) {
        const path = [to];
        for (let at = to; at !== from;) {
          at = previous.get(at) as string;
          path.unshift(at);
        }
        return path;
      }
      for (const next of this.edges(file).values()) {
        if (previous.has(next)) continue;
        previous.set(next, file);
        queue.push(next);
      }
    }
    return undefined;
  }

  /** Tarjan's algorithm from `root`, iterative (a deep import chain must not overflow the stack). */
  #place(root: string): void {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    let counter = 0;
    const visit = (file: string): Iterator<string> => {
      index.set(file, counter);
      low.set(file, counter);
      counter++;
      stack.push(file);
      onStack.add(file);
      return this.edges(file).values();
    };
    const work: { file: string; next: Iterator<string> }[] = [{ file: root, next: visit(root) }];
    while (work.length > 0) {
      const frame = work[work.length - 1] as { file: string; next: Iterator<string> };
      const step = frame.next.next();
      if (!step.done) {
        const target = step.value;
        if (this.#component.has(target)) continue;
        if (!index.has(target)) work.push({ file: target, next: visit(target) });
        else if (onStack.has(target)) low.set(frame.file, Math.min(low.get(frame.file) ?? 0, index.get(target) ?? 0));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) {
        low.set(parent.file, Math.min(low.get(parent.file) ?? 0, low.get(frame.file) ?? 0));
      }
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const id = this.#components++;
      for (;;) {
        const member = stack.pop() as string;
        onStack.delete(member);
        this.#component.set(member, id);
        if (member === frame.file) break;
      }
    }
  }
}

/** The graph of each workspace root seen in this process. */
const graphs = new Map<string, ImportGraph>();

/** The graph of the workspace holding `file`, read again when the linted text of `file` differs from what it read. */
function graphFor(file: string, text: string): ImportGraph {
  const root = workspaceRoot(dirname(file));
  let graph = graphs.get(root);
  if (graph === undefined || (graph.textOf(file) ?? text) !== text) {
    graph = new ImportGraph(workspacePackages(root));
    graphs.set(root, graph);
  }
  graph.edges(file, text);
  return graph;
}

type ImportNode = Rule.Node & { source?: { type: string; value?: unknown } | null };

/** The rule (see the module comment). */
export const noImportCycle: Rule.RuleModule = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles, type-only imports included.' },
    schema: [],
    messages: { cycle: 'Import cycle: {{cycle}}.' },
  },
  create(context) {
    const file = context.physicalFilename;
    if (!SOURCE_EXTENSIONS.some((ext) => file.endsWith(ext)) || !isFile(file)) return {};
    const graph = graphFor(file, context.sourceCode.text);
    const own = graph.component(file);
    const check = (node: ImportNode): void => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string') return;
      const target = graph.edges(file).get(specifier);
      if (target === undefined || graph.component(target) !== own) return;
      const back = graph.path(target, file) ?? [target, file];
      const cycle = [file, ...back].map((f) => relative(context.cwd, f)).join(' → ');
      context.report({ node: node.source as unknown as Rule.Node, messageId: 'cycle', data: { cycle } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

/** An ESLint plugin holding {@link noImportCycle} as `no-import-cycle`. */
export const importCyclesPlugin = { rules: { 'no-import-cycle': noImportCycle } };
