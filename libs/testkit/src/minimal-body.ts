import { z } from 'zod';
import type { MethodDef } from '@ars/contracts';

/** A JSON Schema node, as zod emits it. */
type Node = {
  $ref?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
  type?: string | string[];
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node | Node[];
  prefixItems?: Node[];
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
  contentEncoding?: string;
  default?: unknown;
  $defs?: Record<string, Node>;
  definitions?: Record<string, Node>;
  minProperties?: number;
  additionalProperties?: Node | boolean;
  propertyNames?: Node;
};

function resolve(ref: string, root: Node): Node {
  const name = ref.split('/').at(-1) ?? '';
  return root.$defs?.[name] ?? root.definitions?.[name] ?? {};
}

/** Values tried, in order, against a `pattern` the generic sample does not match. */
const PATTERN_CANDIDATES = ['x', 'text/plain', 'x-1', 'x_1', 'a1', '1', 'x.y', 'https://example.test/x', 'X'];

function sampleString(node: Node): string {
  if (node.pattern !== undefined) {
    const pattern = new RegExp(node.pattern, 'u');
    const match = PATTERN_CANDIDATES.find(
      (candidate) => pattern.test(candidate) && candidate.length >= (node.minLength ?? 0),
    );
    if (match !== undefined) return match;
  }
  if (node.format === 'base64' || node.contentEncoding === 'base64') return 'eA==';
  if (node.format === 'date-time') return new Date(0).toISOString();
  if (node.format === 'uri' || node.format === 'url') return 'https://example.test/x';
  if (node.format === 'email') return 'someone@example.test';
  if (node.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  const length = Math.max(node.minLength ?? 1, 1);
  return 'x'.repeat(Math.min(length, node.maxLength ?? length));
}

function sampleNumber(node: Node): number {
  if (node.minimum !== undefined) return node.minimum;
  if (node.exclusiveMinimum !== undefined) return node.exclusiveMinimum + 1;
  if (node.maximum !== undefined && node.maximum < 0) return node.maximum;
  return 1;
}

function sample(node: Node, root: Node, depth: number): unknown {
  if (depth > 12) return undefined;
  if (node.$ref !== undefined) return sample(resolve(node.$ref, root), root, depth + 1);
  if ('const' in node) return node.const;
  if (node.enum !== undefined) return node.enum[0];
  const options = node.anyOf ?? node.oneOf;
  if (options !== undefined) {
    const usable = options.find((option) => option.type !== 'null') ?? options[0] ?? {};
    return sample(usable, root, depth + 1);
  }
  if (node.allOf !== undefined) return sample(node.allOf[0] ?? {}, root, depth + 1);
  const type = Array.isArray(node.type) ? node.type.find((t) => t !== 'null') : node.type;
  switch (type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const key of node.required ?? []) value[key] = sample(node.properties?.[key] ?? {}, root, depth + 1);
      if (Object.keys(value).length < (node.minProperties ?? 0) && typeof node.additionalProperties === 'object') {
        const key = node.propertyNames?.enum?.[0];
        value[typeof key === 'string' ? key : 'k'] = sample(node.additionalProperties, root, depth + 1);
      }
      return value;
    }
    case 'array': {
      if (node.prefixItems !== undefined) return node.prefixItems.map((item) => sample(item, root, depth + 1));
      const count = node.minItems ?? 0;
      const item = Array.isArray(node.items) ? (node.items[0] ?? {}) : (node.items ?? {});
      return Array.from({ length: count }, () => sample(item, root, depth + 1));
    }
    case 'string':
      return sampleString(node);
    case 'integer':
    case 'number':
      return sampleNumber(node);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}

/**
 * The smallest body the method's request schema accepts, built from its JSON
 * Schema: required members only, minimal values. `identity` is `{}` (run set
 * on steering controls). Returns the body and whether the schema accepts it.
 */
export function minimalBody(method: MethodDef): { body: Record<string, unknown>; valid: boolean } {
  const root = z.toJSONSchema(method.request, { io: 'input', unrepresentable: 'any' }) as Node;
  const generated = sample(root, root, 0);
  const body: Record<string, unknown> =
    typeof generated === 'object' && generated !== null ? { ...(generated as object) } : {};
  body.identity = method.steering === undefined ? {} : { run: 'run-1' };
  return { body, valid: method.request.safeParse(body).success };
}
