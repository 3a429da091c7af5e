import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ServiceError, isErrorCode, isServiceError, toServiceError } from '../src/index.ts';

/** docs/errors.md, read relative to the repository root. */
const ERRORS_MD = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

/** The catalogue rows of docs/errors.md: `| \`code\` | status | when |`. */
function documentedRows(): Array<{ code: string; status: number }> {
  return [...ERRORS_MD.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| .+ \|$/gm)].map((m) => ({
    code: m[1] ?? '',
    status: Number(m[2]),
  }));
}

describe('error catalogue', () => {
  it('documents every code of ERROR_CODES in docs/errors.md', () => {
    const documented = new Set(documentedRows().map((r) => r.code));
    const missing = Object.keys(ERROR_CODES).filter((code) => !documented.has(code));
    expect(missing).toEqual([]);
  });

  it('has no orphan or duplicate row in docs/errors.md', () => {
    const codes = documentedRows().map((r) => r.code);
    expect(codes.filter((code) => !isErrorCode(code))).toEqual([]);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('documents the HTTP status of each code as the catalogue has it', () => {
    for (const { code, status } of documentedRows())
      expect(status, code).toBe(ERROR_CODES[code as keyof typeof ERROR_CODES]);
  });

  it('answers invalid_request with 400 and session_erased with 410', () => {
    expect(ERROR_CODES.invalid_request).toBe(400);
    expect(ERROR_CODES.session_erased).toBe(410);
  });
});

describe('ServiceError', () => {
  it('carries the catalogue status and a retryable flag', () => {
    const error = new ServiceError('timeout', 'slow');
    expect([error.status, error.retryable, error.code]).toEqual([504, true, 'timeout']);
    expect(new ServiceError('not_found', 'x').retryable).toBe(false);
  });

  it('puts only code and message on the wire', () => {
    expect(new ServiceError('conflict', 'stale', { cause: new Error('db') }).toEnvelope()).toEqual({
      code: 'conflict',
      message: 'stale',
    });
  });

  it('recognises a ServiceError from another copy of the package by its brand', () => {
    const foreign = Object.assign(new Error('x'), { [Symbol.for('@ars/contracts/ServiceError')]: true });
    expect(isServiceError(foreign)).toBe(true);
    expect(isServiceError(new Error('x'))).toBe(false);
  });

  it('normalises any other throw to internal', () => {
    const error = toServiceError(new TypeError('boom'));
    expect([error.code, error.status, error.message]).toEqual(['internal', 500, 'internal error']);
  });
});
