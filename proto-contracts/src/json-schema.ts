import { z } from 'zod';

/** A JSON Schema object (draft 2020-12). */
export type JsonSchema = { [keyword: string]: unknown };

/** The dialect of every schema this package emits. */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** zod's conversion options shared by every emitter. */
const BASE_OPTIONS = { target: 'draft-2020-12', unrepresentable: 'any' } as const;

/**
 * Converts one zod schema to a standalone JSON Schema (2020-12). `io` picks
 * the side: `input` for what a caller may send (defaults optional),
 * `output` for what is produced.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): JsonSchema {
  return z.toJSONSchema(schema, { ...BASE_OPTIONS, io }) as JsonSchema;
}

/**
 * Converts named zod schemas to JSON Schemas that reference each other
 * through `refBase + name` (e.g. `#/components/schemas/`), without the
 * per-schema `$schema` and `$id` keywords so they embed in a larger document.
 */
export function toJsonSchemaComponents(
  named: ReadonlyMap<string, z.ZodType>,
  refBase: string,
  io: 'input' | 'output' = 'input',
): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of named) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { ...BASE_OPTIONS, io, uri: (id) => `${refBase}${id}` }) as {
    schemas: Record<string, JsonSchema>;
  };
  const out: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    out[id] = rest;
  }
  return out;
}
