import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseUpArgs, runCli } from '../src/cli.ts';
import { testSteps } from '../src/commands/test.ts';
import type { Io } from '../src/io.ts';
import { REPO_ROOT } from '../src/cli.ts';

function captureIo(env: Record<string, string> = {}): Io & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    env,
    isTty: false,
    stdout: (text) => (out += text),
    stderr: (text) => (err += text),
    out: () => out,
    err: () => err,
  };
}

/** A stand-in gateway on an ephemeral port that answers every POST with `answer`. */
async function withGateway<T>(
  status: number,
  answer: unknown,
  run: (baseUrl: string, seen: { url: string; auth: string; body: string }[]) => Promise<T>,
): Promise<T> {
  const seen: { url: string; auth: string; body: string }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ url: request.url ?? '', auth: request.headers.authorization ?? '', body });
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(request.url === '/v1/dev/bootstrap.json' ? { token: 'boot' } : answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('runCli', () => {
  it('prints the usage on stderr and exits 2 for an unknown command', async () => {
    const io = captureIo();
    expect(await runCli(['frobnicate'], io)).toBe(2);
    expect(io.err()).toContain('unknown command "frobnicate"');
    expect(io.err()).toContain('Usage: ars <command>');
    expect(io.out()).toBe('');
  });

  it('prints the usage on stdout for help', async () => {
    const io = captureIo();
    expect(await runCli(['help'], io)).toBe(0);
    expect(io.out()).toContain('Usage: ars <command>');
  });

  it('refuses to start up with an invalid PORT, naming the variable (exit 2)', async () => {
    const io = captureIo({ PORT: 'eighty' });
    expect(await runCli(['up'], io)).toBe(2);
    expect(io.err()).toMatch(/PORT: must be an integer between 0 and 65535/);
  });

  it('refuses an up argument other than --split (exit 2)', async () => {
    const io = captureIo();
    expect(await runCli(['up', '--one-process'], io)).toBe(2);
    expect(io.err()).toContain('up takes only --split');
  });

  it('refuses a --log-format other than json or pretty (exit 2)', async () => {
    const io = captureIo();
    expect(await runCli(['up', '--log-format', 'xml'], io)).toBe(2);
    expect(io.err()).toContain('--log-format json|pretty');
  });

  it('exits 2 when call has no method', async () => {
    const io = captureIo();
    expect(await runCli(['call'], io)).toBe(2);
    expect(io.err()).toContain('call needs a method name');
  });

  it('exits 2 when the call body is not JSON', async () => {
    const io = captureIo({ ARS_TOKEN: 't' });
    expect(await runCli(['call', 'runtime.info', '{oops'], io)).toBe(2);
  });

  it('calls a method with ARS_TOKEN and prints the JSON answer', async () => {
    await withGateway(200, { protocol_version: '0.1.0' }, async (baseUrl, seen) => {
      const io = captureIo({ ARS_URL: baseUrl, ARS_TOKEN: 'tok' });
      expect(await runCli(['call', 'runtime.info', '{"identity":{}}'], io)).toBe(0);
      expect(JSON.parse(io.out())).toEqual({ protocol_version: '0.1.0' });
      expect(seen).toEqual([{ url: '/v1/control/runtime.info', auth: 'Bearer tok', body: '{"identity":{}}' }]);
    });
  });

  it('uses a bootstrap token without ARS_TOKEN and adds an empty identity', async () => {
    await withGateway(200, { ok: true }, async (baseUrl, seen) => {
      const io = captureIo({ ARS_URL: baseUrl });
      expect(await runCli(['info'], io)).toBe(0);
      expect(seen.map((s) => s.url)).toEqual(['/v1/dev/bootstrap.json', '/v1/control/runtime.info']);
      expect(seen[1]).toMatchObject({ auth: 'Bearer boot', body: '{"identity":{}}' });
    });
  });

  it('prints the error code and exits 1 when the server refuses', async () => {
    await withGateway(401, { code: 'auth_rejected', message: 'bad signature' }, async (baseUrl) => {
      const io = captureIo({ ARS_URL: baseUrl, ARS_TOKEN: 'tok' });
      expect(await runCli(['info'], io)).toBe(1);
      expect(io.err()).toBe('ars info: auth_rejected (HTTP 401): bad signature\n');
    });
  });

  it('prints a minted token', async () => {
    await withGateway(200, {}, async (baseUrl, seen) => {
      const io = captureIo({ ARS_URL: baseUrl });
      expect(await runCli(['token', '{"tenant":"a","user":"b","session":"c"}'], io)).toBe(0);
      expect(io.out()).toBe('boot\n');
      expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ tenant: 'a', user: 'b', session: 'c' });
    });
  });
});

describe('testSteps', () => {
  it('runs tsc, eslint when the root has a config, then vitest with the extra arguments', () => {
    expect(testSteps(REPO_ROOT, ['--project', 'unit']).map((step) => step.title)).toEqual([
      'tsc -p tsconfig.json',
      'eslint .',
      'vitest run --project unit',
    ]);
  });

  it('skips eslint without a config', () => {
    expect(testSteps('/nonexistent', []).map((step) => step.title)).toEqual(['tsc -p tsconfig.json', 'vitest run']);
  });
});

describe('parseUpArgs', () => {
  it('reads --split and --log-format in either spelling, pretty by default', () => {
    expect(parseUpArgs([])).toEqual({ split: false, logFormat: 'pretty' });
    expect(parseUpArgs(['--log-format', 'json'])).toEqual({ split: false, logFormat: 'json' });
    expect(parseUpArgs(['--split', '--log-format=pretty'])).toEqual({ split: true, logFormat: 'pretty' });
  });

  it('refuses a missing or unknown format and any other argument', () => {
    expect(parseUpArgs(['--log-format'])).toBeUndefined();
    expect(parseUpArgs(['--log-format=yaml'])).toBeUndefined();
    expect(parseUpArgs(['--verbose'])).toBeUndefined();
  });
});
