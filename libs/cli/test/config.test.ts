import { describe, expect, it } from 'vitest';
import { ConfigError, parseUpConfig, useColor } from '../src/config.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseUpConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => p.variable);
    throw error;
  }
  return [];
}

describe('parseUpConfig', () => {
  it('applies the defaults to an empty environment', () => {
    expect(parseUpConfig({})).toEqual({
      PORT: 8080,
      HOST: '127.0.0.1',
      DATA_DIR: '.data',
      NATS_MEMORY_LIMIT_MIB: 160,
      ARS_UP_MODE: 'one-process',
    });
  });

  it('treats an empty variable as unset', () => {
    expect(parseUpConfig({ PORT: '', NATS_URL: '', NATS_MEMORY_LIMIT_MIB: '' })).toEqual({
      PORT: 8080,
      HOST: '127.0.0.1',
      DATA_DIR: '.data',
      NATS_MEMORY_LIMIT_MIB: 160,
      ARS_UP_MODE: 'one-process',
    });
  });

  it('accepts every valid variable', () => {
    const env = {
      PORT: '0',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/x',
      NATS_URL: 'nats://a:4222,nats://b:4222',
      NATS_MEMORY_LIMIT_MIB: '512',
      MONGO_URL: 'mongodb://m:27017',
      STORE_ENGINE: 'sqlite',
      STORE_LOCKING: 'shared',
      ARS_UP_MODE: 'split',
    };
    expect(parseUpConfig(env)).toEqual({ ...env, PORT: 0, NATS_MEMORY_LIMIT_MIB: 512 });
    expect(parseUpConfig({ NATS_MEMORY_LIMIT_MIB: '0' }).NATS_MEMORY_LIMIT_MIB).toBe(0);
  });

  it.each(['abc', '-1', '32', '100.5', '1GiB'])('names NATS_MEMORY_LIMIT_MIB when it is %j', (limit) => {
    expect(problemsOf({ NATS_MEMORY_LIMIT_MIB: limit })).toEqual(['NATS_MEMORY_LIMIT_MIB']);
  });

  it.each(['abc', '-1', '65536', '80.5', '8080x'])('names PORT when it is %j', (port) => {
    expect(problemsOf({ PORT: port })).toEqual(['PORT']);
  });

  it('names NATS_URL and MONGO_URL when they are not URLs of their kind', () => {
    expect(problemsOf({ NATS_URL: 'http://x:4222', MONGO_URL: 'localhost' })).toEqual(['NATS_URL', 'MONGO_URL']);
  });

  it('names ARS_UP_MODE when it is neither one-process nor split', () => {
    expect(problemsOf({ ARS_UP_MODE: 'cluster' })).toEqual(['ARS_UP_MODE']);
  });

  it('names STORE_ENGINE when it is not an embedded engine', () => {
    expect(problemsOf({ STORE_ENGINE: 'mysql' })).toEqual(['STORE_ENGINE']);
  });

  it('names STORE_LOCKING when it is neither shared nor exclusive', () => {
    expect(problemsOf({ STORE_LOCKING: 'none' })).toEqual(['STORE_LOCKING']);
  });

  it('quotes the bad value in the message', () => {
    expect(() => parseUpConfig({ PORT: 'abc' })).toThrow(/PORT: must be an integer between 0 and 65535 \(got "abc"\)/);
  });
});

describe('useColor', () => {
  it('colors a terminal unless NO_COLOR is set', () => {
    expect(useColor({}, true)).toBe(true);
    expect(useColor({ NO_COLOR: '1' }, true)).toBe(false);
  });

  it('colors a pipe only with FORCE_COLOR', () => {
    expect(useColor({}, false)).toBe(false);
    expect(useColor({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(useColor({ FORCE_COLOR: '0' }, true)).toBe(false);
  });
});
