import { createReadStream } from 'node:fs';
import type { ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, relative, resolve, sep } from 'node:path';

/** Content types of what a Vite build writes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The content type of a file name; unknown extensions are bytes. */
export function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file under `root` that a URL path names, or undefined when the path
 * leaves `root` (`..`, encoded or not), holds a NUL, or is not valid
 * percent-encoding.
 */
export function resolveInside(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const base = resolve(root);
  const target = resolve(join(base, decoded));
  const inside = relative(base, target);
  if (inside === '' || inside.startsWith('..') || inside.split(sep).includes('..')) return undefined;
  return target;
}

/** An open regular file: its size and a stream of its bytes. */
export interface OpenFile {
  readonly size: number;
  readonly stream: () => ReadStream;
}

/** Opens `path` when it is a regular file; undefined when it does not exist or is a directory. */
export async function openFile(path: string): Promise<OpenFile | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return undefined;
    return { size: info.size, stream: () => createReadStream(path) };
  } catch {
    return undefined;
  }
}
