import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consoleRoutes } from '../../src/console/console.routes.ts';
import { resolveInside } from '../../src/console/static-files.ts';
import { installErrorEnvelope } from '../../src/http/errors.ts';

const INDEX = '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>';
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function gateway(files: Record<string, string> | undefined): Promise<FastifyInstance> {
  const distDir = await mkdtemp(join(tmpdir(), 'console-dist-'));
  cleanup.push(() => rm(distDir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files ?? {})) {
    await mkdir(join(distDir, name, '..'), { recursive: true });
    await writeFile(join(distDir, name), text);
  }
  const app = Fastify();
  installErrorEnvelope(app);
  await app.register(consoleRoutes, { distDir });
  cleanup.push(() => app.close());
  return app;
}

const BUILT = { 'index.html': INDEX, 'assets/index-abc123.js': 'export {};', 'assets/index-abc123.css': 'body{}' };

describe('console routes', () => {
  it('redirects / to /console/', async () => {
    const app = await gateway(BUILT);
    const response = await app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/console/');
  });

  it('serves index.html uncached, with a CSP that allows no inline script', async () => {
    const app = await gateway(BUILT);
    const response = await app.inject({ method: 'GET', url: '/console/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(response.body).toBe(INDEX);
  });

  it('serves hashed assets with their content type, cached as immutable', async () => {
    const app = await gateway(BUILT);
    const js = await app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' });
    const css = await app.inject({ method: 'GET', url: '/console/assets/index-abc123.css' });
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers a missing asset 404 not_found and an extension-less path with index.html', async () => {
    const app = await gateway(BUILT);
    const missing = await app.inject({ method: 'GET', url: '/console/assets/gone-1.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'not_found' });
    const deep = await app.inject({ method: 'GET', url: '/console/runs/abc' });
    expect(deep.statusCode).toBe(200);
    expect(deep.body).toBe(INDEX);
  });

  it('answers 503 unavailable in the error envelope when the console is not built', async () => {
    const app = await gateway(undefined);
    const response = await app.inject({ method: 'GET', url: '/console/' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'unavailable', message: expect.stringContaining('not built') });
  });

  it('never serves a file outside the build directory', async () => {
    const app = await gateway(BUILT);
    for (const url of ['/console/..%2f..%2fetc%2fpasswd', '/console/%2e%2e/%2e%2e/etc/passwd', '/console/assets/%00.js']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
    }
    expect(resolveInside('/srv/dist', '../secret')).toBeUndefined();
    expect(resolveInside('/srv/dist', 'assets/a.js')).toBe('/srv/dist/assets/a.js');
  });
});
