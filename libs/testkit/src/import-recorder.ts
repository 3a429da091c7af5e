import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What {@link recordImports} gives: the flags for a child process, and what it imported once it exited. */
export interface ImportRecorder {
  /** Node.js flags that install the recording: pass them before the script. */
  readonly nodeFlags: readonly string[];
  /**
   * The npm packages the process resolved a module of (`openai`,
   * `@nats-io/nats-core`, …), directly or through another package. Read once
   * the process has exited; throws when it wrote nothing (it did not exit on
   * its own, or the flags were not passed).
   */
  packages(): ReadonlySet<string>;
  /** Removes the recording's file. */
  dispose(): void;
}

/**
 * Records which npm packages a child Node.js process loads: a module
 * resolution hook (`module.registerHooks`, for `import` and `require`
 * alike) notes the package of every resolved file under a `node_modules`
 * folder, and the process writes the list when it exits. For tests that hold
 * a process to what it must not load (a driver or an SDK it does not use).
 */
export function recordImports(): ImportRecorder {
  const dir = mkdtempSync(join(tmpdir(), 'ars-imports-'));
  const file = join(dir, 'packages.json');
  const hook = [
    `import { registerHooks } from 'node:module';`,
    `import { writeFileSync } from 'node:fs';`,
    `const seen = new Set();`,
    `registerHooks({`,
    `  resolve(specifier, context, nextResolve) {`,
    `    const result = nextResolve(specifier, context);`,
    // The last node_modules folder of the path names the package (pnpm's store nests them).
    `    const match = /.*\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(result.url);`,
    `    if (match) seen.add(match[1]);`,
    `    return result;`,
    `  },`,
    `});`,
    `process.on('exit', () => writeFileSync(${JSON.stringify(file)}, JSON.stringify([...seen])));`,
  ].join('\n');
  return {
    nodeFlags: [`--import=data:text/javascript,${encodeURIComponent(hook)}`],
    packages() {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        throw new Error('the process recorded no imports: it did not exit on its own, or ran without the flags');
      }
      return new Set(JSON.parse(text) as string[]);
    },
    dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
