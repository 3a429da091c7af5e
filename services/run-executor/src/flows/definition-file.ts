import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { FlowDefinition, Id } from '@ars/contracts';
import type { z } from 'zod';

/**
 * One flow file: its text parsed (YAML, or JSON by extension) and checked
 * against `FlowDefinition`, and its version (the content hash). Pure: the
 * catalog reads the files.
 */

/** File extensions of flow definitions. */
export const FLOW_FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

/** Largest flow file read, in bytes. */
export const FLOW_FILE_MAX_BYTES = 1_048_576;

/** A flow file, parsed: its definition, or why it has none. */
export type ParsedFlowFile =
  | { readonly ok: true; readonly definition: FlowDefinition; readonly version: string }
  | { readonly ok: false; readonly problems: string[]; readonly version: string };

/** A definition's version: the SHA-256 of its file's bytes, 16 hex digits. */
export function flowVersion(content: string): string {
  return `sha256:${createHash('sha256').update(content).digest('hex').slice(0, 16)}`;
}

function issues(error: z.ZodError): string[] {
  return error.issues.slice(0, 20).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

function parseText(content: string, extension: string): unknown {
  if (extension === '.json') return JSON.parse(content) as unknown;
  return parseYaml(content, { maxAliasCount: 100 }) as unknown;
}

/**
 * Parses flow file `name` (`<flow_id><extension>`) of tenant `tenant`
 * (`undefined` for a file at the top of `FLOWS_DIR`, which must name its
 * tenant in a `tenant` member).
 */
export function parseFlowFile(
  content: string,
  { extension, tenant }: { readonly extension: string; readonly tenant: string | undefined },
): ParsedFlowFile {
  const version = flowVersion(content);
  let data: unknown;
  try {
    data = parseText(content, extension);
  } catch (error) {
    return {
      ok: false,
      problems: [`not ${extension === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`],
      version,
    };
  }
  const parsed = FlowDefinition.safeParse(data);
  if (!parsed.success) return { ok: false, problems: issues(parsed.error), version };
  const definition = parsed.data;
  if (tenant === undefined && definition.tenant === undefined) {
    return { ok: false, problems: ['tenant: a file at the top of FLOWS_DIR names its tenant'], version };
  }
  if (tenant !== undefined && definition.tenant !== undefined && definition.tenant !== tenant) {
    return {
      ok: false,
      problems: [`tenant: ${definition.tenant} is not the file's tenant directory ${tenant}`],
      version,
    };
  }
  return { ok: true, definition, version };
}

/** Whether `name` can be a flow id or a tenant (an `Id`, no leading dot: `..data` of a mounted ConfigMap is not one). */
export function isFlowName(name: string): boolean {
  return !name.startsWith('.') && Id.safeParse(name).success;
}
