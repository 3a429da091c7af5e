import { describe, expect, it } from 'vitest';
import { DEPRECATIONS, PROTOCOL_VERSION, isCompatibleVersion, parseSemver } from '../src/index.ts';

describe('protocol version', () => {
  it('is 0.1.0 with an empty deprecation registry', () => {
    expect(PROTOCOL_VERSION).toBe('0.1.0');
    expect(DEPRECATIONS).toEqual([]);
  });

  it('treats the same major as compatible', () => {
    expect(isCompatibleVersion('0.9.3', '0.1.0')).toBe(true);
    expect(isCompatibleVersion('0.1.0')).toBe(true);
  });

  it('compares majors numerically, not as strings', () => {
    expect(isCompatibleVersion('10.0.0', '1.0.0')).toBe(false);
    expect(isCompatibleVersion('1.0.0', '10.0.0')).toBe(false);
    expect(isCompatibleVersion('2.0.0', '10.0.0')).toBe(false);
    expect(isCompatibleVersion('10.2.0', '10.0.7')).toBe(true);
    expect(isCompatibleVersion('01.0.0', '1.5.0')).toBe(true);
  });

  it('treats a different major as incompatible', () => {
    expect(isCompatibleVersion('1.0.0', '0.1.0')).toBe(false);
  });

  it('refuses malformed versions', () => {
    expect(isCompatibleVersion('0.1', '0.1.0')).toBe(false);
    expect(isCompatibleVersion('v0.1.0', '0.1.0')).toBe(false);
    expect(parseSemver('1.2.3')).toEqual({ major: 1, minor: 2, patch: 3 });
    expect(parseSemver('1.2.x')).toBeUndefined();
  });
});
