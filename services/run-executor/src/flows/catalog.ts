import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { FlowDefinition } from '@ars/contracts';
import { startPeriodic } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import { FLOW_FILE_EXTENSIONS, FLOW_FILE_MAX_BYTES, isFlowName, parseFlowFile } from './definition-file.ts';

/**
 * The flows of `FLOWS_DIR`, kept in memory and read again every
 * `reloadMs`: `<dir>/<tenant>/<flow_id>.yaml|.yml|.json`, or
 * `<dir>/<flow_id>.…` naming its tenant. Directories and symbolic links are
 * followed (a mounted ConfigMap is links into `..data`). A file that does
 * not load is kept as an invalid flow with its problems (logged once per
 * version); nothing a file holds stops the service.
 */

/** One flow of the catalog. */
export interface CatalogFlow {
  readonly tenant: string;
  readonly flow_id: string;
  readonly path: string;
  readonly version: string;
  /** Absent when the file did not load. */
  readonly definition?: FlowDefinition;
  readonly problems?: readonly string[];
  /** When this version was first read by this replica. */
  readonly loaded_at: string;
  /** The file's modification time. */
  readonly updated_at: string;
}

/** The flows an executor knows. */
export interface FlowCatalog {
  get(tenant: string, flowId: string): CatalogFlow | undefined;
  /** Every flow of these tenants (every tenant: `undefined`), by tenant then flow id. */
  list(tenants?: readonly string[]): CatalogFlow[];
  /** Reads the directory again now. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

interface FoundFile {
  readonly path: string;
  readonly flowId: string;
  readonly extension: string;
  /** The tenant directory; undefined at the top. */
  readonly tenant: string | undefined;
}

async function kindOf(path: string): Promise<'file' | 'dir' | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return undefined;
  return info.isDirectory() ? 'dir' : info.isFile() ? 'file' : undefined;
}

function asFlowFile(dir: string, name: string, tenant: string | undefined): FoundFile | undefined {
  const extension = extname(name);
  const flowId = name.slice(0, name.length - extension.length);
  if (!(FLOW_FILE_EXTENSIONS as readonly string[]).includes(extension) || !isFlowName(flowId)) return undefined;
  return { path: join(dir, name), flowId, extension, tenant };
}

async function findFiles(root: string): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  for (const name of (await readdir(root)).sort()) {
    if (name.startsWith('.')) continue;
    const path = join(root, name);
    const kind = await kindOf(path);
    if (kind === 'file') {
      const file = asFlowFile(root, name, undefined);
      if (file !== undefined) found.push(file);
    } else if (kind === 'dir' && isFlowName(name)) {
      for (const inner of (await readdir(path)).sort()) {
        const file = asFlowFile(path, inner, name);
        if (file !== undefined && (await kindOf(file.path)) === 'file') found.push(file);
      }
    }
  }
  return found;
}

const keyOf = (tenant: string, flowId: string) => JSON.stringify([tenant, flowId]);

/** Loads `dir` now and then every `reloadMs` (`dir` undefined: an empty catalog). */
export async function createFlowCatalog(options: {
  readonly dir: string | undefined;
  readonly reloadMs: number;
  readonly logger: Logger;
}): Promise<FlowCatalog> {
  const { dir, logger } = options;
  let flows = new Map<string, CatalogFlow>();
  /** Versions already reported, so that an unchanged bad file is logged once. */
  const reported = new Set<string>();

  async function readOne(file: FoundFile, previous: Map<string, CatalogFlow>): Promise<CatalogFlow> {
    const info = await stat(file.path);
    const updatedAt = info.mtime.toISOString();
    const content = info.size > FLOW_FILE_MAX_BYTES ? undefined : await readFile(file.path, 'utf8');
    const parsed =
      content === undefined
        ? { ok: false as const, problems: [`larger than ${FLOW_FILE_MAX_BYTES} bytes`], version: `size:${info.size}` }
        : parseFlowFile(content, { extension: file.extension, tenant: file.tenant });
    const tenant = file.tenant ?? (parsed.ok ? (parsed.definition.tenant ?? '') : '');
    const before = previous.get(keyOf(tenant, file.flowId));
    const loadedAt = before?.version === parsed.version ? before.loaded_at : new Date().toISOString();
    const base = { tenant, flow_id: file.flowId, path: file.path, version: parsed.version, loaded_at: loadedAt };
    if (parsed.ok) return { ...base, definition: parsed.definition, updated_at: updatedAt };
    if (!reported.has(`${file.path}:${parsed.version}`)) {
      reported.add(`${file.path}:${parsed.version}`);
      logger.warn({ path: file.path, problems: parsed.problems }, 'flow file not loaded');
    }
    return { ...base, problems: parsed.problems, updated_at: updatedAt };
  }

  async function reload(): Promise<void> {
    if (dir === undefined) return;
    const files = await findFiles(dir).catch((error: unknown) => {
      logger.warn({ err: error, dir }, 'FLOWS_DIR not readable; flows kept as they were');
      return undefined;
    });
    if (files === undefined) return;
    const next = new Map<string, CatalogFlow>();
    for (const file of files) {
      const flow = await readOne(file, flows).catch((error: unknown) => {
        logger.warn({ err: error, path: file.path }, 'flow file not readable');
        return undefined;
      });
      // A top-level file without a tenant has nowhere to be listed: it is only logged.
      if (flow === undefined || flow.tenant === '') continue;
      const key = keyOf(flow.tenant, flow.flow_id);
      if (next.has(key)) {
        logger.warn(
          { path: file.path, tenant: flow.tenant, flowId: flow.flow_id },
          'flow defined twice; first file kept',
        );
        continue;
      }
      next.set(key, flow);
    }
    flows = next;
  }

  await reload();
  const periodic =
    dir === undefined
      ? undefined
      : startPeriodic(reload, { name: 'flow catalog reload', intervalMs: options.reloadMs, logger });
  logger.info({ dir, flows: flows.size }, 'flow catalog loaded');
  return {
    get: (tenant, flowId) => flows.get(keyOf(tenant, flowId)),
    list: (tenants) =>
      [...flows.values()]
        .filter((f) => tenants === undefined || tenants.includes(f.tenant))
        .sort((a, b) =>
          a.tenant === b.tenant ? a.flow_id.localeCompare(b.flow_id) : a.tenant.localeCompare(b.tenant),
        ),
    reload,
    stop: async () => {
      await periodic?.stop();
    },
  };
}
