import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENTS } from '../src/index.ts';
import { TEMPLATE_PUBLISHERS, UNPUBLISHED_EVENTS } from './unpublished-events.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
// `generated`: the SDK's copy of the contract names every type without publishing any.
const SKIPPED = new Set(['node_modules', 'test', 'dist', 'bench', 'generated']);

/** Production sources under services/ and libs/: no tests, benchmarks or builds. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const SOURCES = [...sourceFiles(join(ROOT, 'services')), ...sourceFiles(join(ROOT, 'libs'))]
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');
const DECISIONS = readFileSync(join(ROOT, 'docs/decisions.md'), 'utf8');

const literal = (type: string) => new RegExp(`['"\`]${type.replace(/\./g, '\\.')}['"\`]`);
const viaTemplate = new Set(TEMPLATE_PUBLISHERS.flatMap((t) => t.types));
const published = (type: string) => literal(type).test(SOURCES) || viaTemplate.has(type);

describe('event registry against its publishers', () => {
  it('publishes every registered type or records why not', () => {
    const orphans = EVENTS.map((e) => e.type).filter((type) => !published(type) && !UNPUBLISHED_EVENTS.has(type));
    expect(orphans).toEqual([]);
  });

  it('lists no published type as unpublished', () => {
    expect([...UNPUBLISHED_EVENTS.keys()].filter(published)).toEqual([]);
  });

  it('lists only registered types', () => {
    const registered = new Set(EVENTS.map((e) => e.type));
    const unknown = [...UNPUBLISHED_EVENTS.keys(), ...viaTemplate].filter((type) => !registered.has(type));
    expect(unknown).toEqual([]);
  });

  it('names a decision heading that docs/decisions.md holds for each unpublished type', () => {
    const headings = new Set(
      DECISIONS.split('\n')
        .filter((l) => l.startsWith('### '))
        .map((l) => l.slice(4)),
    );
    const missing = [...UNPUBLISHED_EVENTS].filter(([, row]) => !headings.has(row.decision)).map(([type]) => type);
    expect(missing).toEqual([]);
  });

  it('finds each template publisher where the table says', () => {
    for (const { file, template } of TEMPLATE_PUBLISHERS) {
      expect(readFileSync(join(ROOT, file), 'utf8'), file).toContain(template);
    }
  });

  it('marks exactly the reserved types reserved in the table too', () => {
    const reserved = EVENTS.filter((e) => e.reserved).map((e) => e.type);
    expect(reserved.every((type) => UNPUBLISHED_EVENTS.get(type)?.issue === null)).toBe(true);
  });
});
