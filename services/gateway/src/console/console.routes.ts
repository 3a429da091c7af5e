import { fileURLToPath } from 'node:url';
import { ServiceError } from '@ars/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { contentTypeOf, openFile, resolveInside } from './static-files.ts';

/** Where the console is served. */
export const CONSOLE_PATH = '/console/';

/** The console's build output in this checkout (or image): `apps/console/dist` at the repository root. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../../apps/console/dist/', import.meta.url));

/**
 * The console's Content-Security-Policy: its own scripts, styles and API
 * only; no inline script, no framing, no plugins.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** What the console routes need. */
export interface ConsoleRoutesOptions {
  /** The built console (`index.html` and `assets/`). @default {@link DEFAULT_CONSOLE_DIR} */
  readonly distDir?: string;
}

/** Hashed build outputs never change under their name: cached for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

/**
 * The browser console: `GET /` redirects to `/console/`; `/console/*` serves
 * the static build (hashed `assets/` immutable, everything else
 * `no-cache`), falls back to `index.html` for extension-less paths (the app
 * routes by hash, so this only spares a stale link a 404), and answers 503
 * `unavailable` in the error envelope when the console is not built. No
 * authentication: the files are public, every API call the app makes carries
 * the user's token.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const distDir = options.distDir ?? DEFAULT_CONSOLE_DIR;

  app.get('/', async (_request, reply) => reply.redirect(CONSOLE_PATH, 302));
  app.get('/console', async (_request, reply) => reply.redirect(CONSOLE_PATH, 301));

  app.get('/console/*', async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    const index = await openFile(`${distDir}/index.html`);
    if (index === undefined) {
      throw new ServiceError(
        'unavailable',
        'the console is not built: run `pnpm --filter @ars/console build` (./ars up does it)',
      );
    }
    const path = rest === '' ? undefined : resolveInside(distDir, rest);
    if (rest !== '' && path === undefined) throw new ServiceError('not_found', 'no such console file');
    const file = path === undefined ? index : await openFile(path);
    if (file === undefined) {
      if (/\.[a-z0-9]+$/i.test(rest)) throw new ServiceError('not_found', 'no such console file');
      return sendFile(reply, index, 'index.html', 'no-cache');
    }
    const name = path ?? 'index.html';
    const cache = rest.startsWith('assets/') ? IMMUTABLE : 'no-cache';
    return sendFile(reply, file, name, cache);
  });
}

function sendFile(
  reply: FastifyReply,
  file: { readonly size: number; readonly stream: () => NodeJS.ReadableStream },
  name: string,
  cacheControl: string,
): FastifyReply {
  return secure(reply)
    .type(contentTypeOf(name))
    .header('cache-control', cacheControl)
    .header('content-length', file.size)
    .send(file.stream());
}
