import { describe, expect, it } from 'vitest';
import { createArgsValidators } from '../../src/tools/json-schema-args.ts';

const schema = {
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1 },
    depth: { type: 'integer', minimum: 0 },
    mode: { enum: ['fast', 'full'] },
    nested: { type: 'object', properties: { n: { type: 'number' } } },
  },
  required: ['path'],
  additionalProperties: false,
};

describe('JSON Schema argument checks', () => {
  it('accepts arguments the schema accepts, unchanged', () => {
    const args = createArgsValidators().argsFor('fs', 'read', schema);
    expect(args.parse({ path: '/tmp/a', depth: 2 })).toEqual({ path: '/tmp/a', depth: 2 });
  });

  it('names the member, the path and the allowed values of what fails', () => {
    const check = createArgsValidators().checkFor('fs', 'read', schema);
    expect(check({})).toBe('must have the member "path"');
    expect(check({ path: 'a', extra: 1 })).toBe('must not have the member "extra"');
    expect(check({ path: 'a', mode: 'slow' })).toBe('mode: must be one of "fast", "full"');
    expect(check({ path: 'a', nested: { n: 'x' } })).toBe('nested.n: must be number');
    expect(check({ path: 1, depth: -1, mode: 0, nested: 2 })).toMatch(/^path: must be string; .+ \(and \d+ more\)$/);
  });

  it('fails a zod parse with the readable message (the tool.invalid_args ValidationError)', () => {
    const result = createArgsValidators().argsFor('fs', 'read', schema).safeParse({ depth: 'x' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('must have the member "path"; depth: must be integer');
  });

  it('compiles a schema once per (server, tool, schema hash), whatever its key order', () => {
    const validators = createArgsValidators();
    validators.checkFor('fs', 'read', schema);
    validators.checkFor('fs', 'read', { ...schema, required: ['path'], type: 'object' });
    expect(validators.stats()).toEqual({ entries: 1, compiles: 1 });
    validators.checkFor('fs', 'write', schema);
    validators.checkFor('fs', 'read', { ...schema, required: [] });
    expect(validators.stats()).toEqual({ entries: 3, compiles: 3 });
  });

  it('keeps at most maxEntries compiled schemas, evicting the least recently used', () => {
    const validators = createArgsValidators({ maxEntries: 2 });
    validators.checkFor('s', 'a', schema);
    validators.checkFor('s', 'b', schema);
    validators.checkFor('s', 'a', schema);
    validators.checkFor('s', 'c', schema);
    expect(validators.stats()).toEqual({ entries: 2, compiles: 3 });
    validators.checkFor('s', 'a', schema);
    expect(validators.stats().compiles).toBe(3);
    validators.checkFor('s', 'b', schema);
    expect(validators.stats().compiles).toBe(4);
  });

  it('reads the dialect from $schema: a 2020-12 schema, and a draft-07 one with the same $id', () => {
    const validators = createArgsValidators();
    const modern = validators.checkFor('s', 't', {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:example:tool',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(modern({ pair: ['a', 1] })).toBeUndefined();
    expect(modern({ pair: [1, 1] })).toBe('pair.0: must be string');
    const old = validators.checkFor('s', 'u', {
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'urn:example:tool',
      type: 'object',
      properties: { n: { type: 'integer' } },
    });
    expect(old({ n: 1.5 })).toBe('n: must be integer');
  });

  it('ignores formats and unknown keywords: the server judges what it accepts', () => {
    const check = createArgsValidators().checkFor('s', 't', {
      type: 'object',
      properties: { url: { type: 'string', format: 'uri', 'x-ui': 'wide' } },
    });
    expect(check({ url: 'not a uri' })).toBeUndefined();
  });

  it('checks only that the arguments are an object when the schema cannot be compiled, and says so once', () => {
    const failed: string[] = [];
    const validators = createArgsValidators({ onCompileError: (server, tool) => failed.push(`${server}/${tool}`) });
    const broken = { type: 'object', properties: { a: { $ref: 'https://example.com/remote.json' } } };
    const check = validators.checkFor('s', 't', broken);
    validators.checkFor('s', 't', broken);
    expect(check({ a: 1 })).toBeUndefined();
    expect(check([] as unknown as Record<string, unknown>)).toBe('arguments must be an object');
    expect(failed).toEqual(['s/t']);
  });
});
