import { describe, expect, it } from 'vitest';
import type { Connection } from '../src/sqlite-connection.ts';
import { connect } from '../src/sqlite-store.ts';

/** An error as node:sqlite reports "database is locked" (SQLITE_BUSY, or one of its extended codes). */
function busy(extended = 0): Error {
  return Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5 | (extended << 8) });
}

const opened = { opened: true } as unknown as Connection;

describe('opening the sqlite connection', () => {
  it('tries again while another process holds the new database, then opens it', async () => {
    const failures = [busy(), busy(1), busy()];
    let attempts = 0;
    const connection = await connect('store.sqlite', () => {
      attempts += 1;
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return opened;
    });
    expect(connection).toBe(opened);
    expect(attempts).toBe(4);
  });

  it('fails at once on anything other than a lock', async () => {
    let attempts = 0;
    const failure = Object.assign(new Error('unable to open database file'), { errcode: 14 });
    await expect(
      connect('store.sqlite', () => {
        attempts += 1;
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(attempts).toBe(1);
  });
});
