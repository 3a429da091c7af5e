import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { contentHash } from '@ars/service-kit';

/**
 * Arguments checked against a JSON Schema that a tool declares as such (an
 * MCP server's `inputSchema`), with ajv. A schema is compiled once per
 * (server, tool, schema hash) and kept in a bounded cache (least recently
 * used first out); the dialect follows its `$schema` (2020-12, 2019-09, else
 * draft-07). Formats are not checked (no format vocabulary is loaded) and
 * unknown keywords are ignored: the server stays the judge of what it
 * accepts. A schema ajv cannot compile (a remote `$ref`, draft-04) checks
 * only that the arguments are an object, and is reported once per entry.
 */

/** Most compiled schemas kept per executor. */
export const ARGS_VALIDATOR_CACHE_MAX = 1_000;
/** Most validation errors named in one ValidationError. */
const MAX_ERRORS_NAMED = 3;

/** What a check finds: nothing (valid), or a readable ValidationError. */
export type ArgsCheckFn = (args: Record<string, unknown>) => string | undefined;

export interface ArgsValidators {
  /**
   * The `args` schema of a tool whose arguments `schema` describes: it
   * accepts an object the schema accepts (unchanged), and fails with a
   * readable message otherwise (`tool.invalid_args` ValidationError).
   */
  argsFor(
    serverId: string,
    tool: string,
    schema: Readonly<Record<string, unknown>>,
  ): z.ZodType<Record<string, unknown>>;
  /** The plain check behind {@link argsFor}. */
  checkFor(serverId: string, tool: string, schema: Readonly<Record<string, unknown>>): ArgsCheckFn;
  /** Entries kept, and schemas compiled since creation. */
  stats(): { readonly entries: number; readonly compiles: number };
}

/** Options of {@link createArgsValidators}. */
export interface ArgsValidatorsOptions {
  /** @default {@link ARGS_VALIDATOR_CACHE_MAX} */
  readonly maxEntries?: number;
  /** Told of a schema that could not be compiled (its calls are checked as objects only). */
  readonly onCompileError?: (serverId: string, tool: string, error: unknown) => void;
}

type Dialect = 'draft-07' | '2019-09' | '2020-12';

interface Entry {
  readonly check: ArgsCheckFn;
  readonly dialect: Dialect;
  /** The object ajv compiled (its own cache is keyed by it), to remove it on eviction. */
  readonly compiled?: Readonly<Record<string, unknown>>;
}

function dialectOf(schema: Readonly<Record<string, unknown>>): Dialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/** A JSON Pointer as a dotted path (`/a/0/b` → `a.0.b`). */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/** One ajv error as a sentence: `where: what`, with the member or values it names. */
export function describeSchemaError(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  let what = error.message ?? 'is invalid';
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    what = `must not have the member "${params.additionalProperty}"`;
  } else if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    what = `must have the member "${params.missingProperty}"`;
  } else if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    what = `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (error.keyword === 'const') {
    what = `must be ${JSON.stringify(params.allowedValue)}`;
  }
  const where = pathOf(error.instancePath);
  return where === '' ? what : `${where}: ${what}`;
}

/** The first errors of a failed validation as one message. */
function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  const list = errors ?? [];
  if (list.length === 0) return 'arguments do not match the tool schema';
  const named = list.slice(0, MAX_ERRORS_NAMED).map(describeSchemaError);
  const more = list.length > MAX_ERRORS_NAMED ? ` (and ${list.length - MAX_ERRORS_NAMED} more)` : '';
  return `${named.join('; ')}${more}`;
}

const objectsOnly: ArgsCheckFn = (args) =>
  typeof args === 'object' && args !== null && !Array.isArray(args) ? undefined : 'arguments must be an object';

export function createArgsValidators(options: ArgsValidatorsOptions = {}): ArgsValidators {
  const maxEntries = options.maxEntries ?? ARGS_VALIDATOR_CACHE_MAX;
  const ajvOptions = {
    strict: false,
    allErrors: true,
    validateFormats: false,
    addUsedSchema: false,
    logger: false,
  } as const;
  const instances: Record<Dialect, Ajv> = {
    'draft-07': new Ajv(ajvOptions),
    '2019-09': new Ajv2019(ajvOptions),
    '2020-12': new Ajv2020(ajvOptions),
  };
  const cache = new Map<string, Entry>();
  let compiles = 0;

  function compile(serverId: string, tool: string, schema: Readonly<Record<string, unknown>>): Entry {
    const dialect = dialectOf(schema);
    // ajv keeps what it compiled, keyed by this object: a copy of ours, removed again on eviction.
    const compiled = structuredClone(schema) as Record<string, unknown>;
    compiles++;
    let validate: ValidateFunction;
    try {
      validate = instances[dialect].compile(compiled);
    } catch (error) {
      options.onCompileError?.(serverId, tool, error);
      return { check: objectsOnly, dialect };
    }
    const check: ArgsCheckFn = (args) => (validate(args) ? undefined : describeErrors(validate.errors));
    return { check, dialect, compiled };
  }

  function checkFor(serverId: string, tool: string, schema: Readonly<Record<string, unknown>>): ArgsCheckFn {
    const key = `${serverId}\u0000${tool}\u0000${contentHash(schema)}`;
    let entry = cache.get(key);
    if (entry !== undefined) {
      // Most recently used last: the first entry is the one to evict.
      cache.delete(key);
      cache.set(key, entry);
      return entry.check;
    }
    entry = compile(serverId, tool, schema);
    cache.set(key, entry);
    while (cache.size > maxEntries) {
      const [oldestKey, oldest] = cache.entries().next().value as [string, Entry];
      cache.delete(oldestKey);
      if (oldest.compiled !== undefined) instances[oldest.dialect].removeSchema(oldest.compiled);
    }
    return entry.check;
  }

  return {
    checkFor,
    argsFor(serverId, tool, schema) {
      const check = checkFor(serverId, tool, schema);
      return z.custom<Record<string, unknown>>().superRefine((value, ctx) => {
        const problem = check(value);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      });
    },
    stats: () => ({ entries: cache.size, compiles }),
  };
}
