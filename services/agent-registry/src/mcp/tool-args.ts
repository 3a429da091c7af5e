import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { contentHash } from '@ars/service-kit';

/**
 * Arguments of an app's tool call (`mcp.apps.call_tool`) checked against
 * the tool's `inputSchema` with the MCP SDK's ajv (draft-07, formats
 * checked, unknown keywords ignored), compiled once per schema. The cache is
 * bounded: past {@link TOOL_ARGS_CACHE_MAX} schemas it starts over with a
 * fresh ajv, whose own cache would otherwise keep every schema it compiled.
 * A schema ajv cannot compile checks only that the arguments are an object.
 */

/** Most compiled schemas kept. */
export const TOOL_ARGS_CACHE_MAX = 500;

/** A check: undefined when the arguments are valid, else what is wrong. */
export type ToolArgsCheck = (args: Record<string, unknown>) => string | undefined;

export interface ToolArgsValidators {
  checkFor(schema: Readonly<Record<string, unknown>>): ToolArgsCheck;
}

export function createToolArgsValidators(maxEntries = TOOL_ARGS_CACHE_MAX): ToolArgsValidators {
  let ajv = new AjvJsonSchemaValidator();
  const cache = new Map<string, ToolArgsCheck>();
  return {
    checkFor(schema) {
      const key = contentHash(schema);
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      if (cache.size >= maxEntries) {
        cache.clear();
        ajv = new AjvJsonSchemaValidator();
      }
      let validate: JsonSchemaValidator<unknown> | undefined;
      try {
        validate = ajv.getValidator(schema as JsonSchemaType);
      } catch {
        validate = undefined;
      }
      const check: ToolArgsCheck = (args) => {
        if (validate === undefined) return undefined;
        const result = validate(args);
        return result.valid ? undefined : result.errorMessage;
      };
      cache.set(key, check);
      return check;
    },
  };
}
