import { existsSync, fdatasync, fstatSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Connection } from '../src/sqlite-connection.ts';
import { SyncLane, WalSync } from '../src/wal-sync.ts';
import type { WalSyncOptions } from '../src/wal-sync.ts';

/** A sync that records the descriptors it was given and calls back only when `finish()` is called. */
function heldSync() {
  const fds: number[] = [];
  const pending: (() => void)[] = [];
  return {
    fds,
    sync: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
      fds.push(fd);
      pending.push(() => done(null));
    },
    finish: () => pending.splice(0).forEach((done) => done()),
  };
}

/** The descriptors of this process open on `path` (Linux's /proc; empty elsewhere). */
function openDescriptors(path: string): string[] {
  if (!existsSync('/proc/self/fd')) return [];
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
}

describe('syncing the write-ahead log in the background', () => {
  let dir: string;
  let log: string;
  let clock: number;
  const now = () => clock;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-wal-sync-'));
    log = join(dir, 'store.sqlite-wal');
    writeFileSync(log, 'frames');
    clock = 1_000;
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** A syncer of `path` on the test clock, syncing with `held`, in a lane of its own unless `options` name one. */
  const syncer = (held: ReturnType<typeof heldSync>, path = log, options: WalSyncOptions = {}) =>
    new WalSync(path, { intervalMs: 100, now, sync: held.sync, lane: new SyncLane(), ...options });

  /** A second store's log beside the first. */
  const otherLog = () => {
    const other = join(dir, 'other.sqlite-wal');
    writeFileSync(other, 'frames');
    return other;
  };

  /** Both commit; only `first` syncs until its sync ends, then `second`'s next commit syncs. Closes both. */
  const expectOneAtATime = (held: ReturnType<typeof heldSync>, first: WalSync, second: WalSync, other: string) => {
    first.committed();
    second.committed();
    expect(held.fds.map((fd) => fstatSync(fd).ino)).toEqual([statSync(log).ino]);
    held.finish();
    second.committed();
    expect(held.fds.map((fd) => fstatSync(fd).ino)).toEqual([statSync(log).ino, statSync(other).ino]);
    held.finish();
    first.close();
    second.close();
  };

  it('syncs the log at the first commit, then at most once per interval', () => {
    const held = heldSync();
    const wal = syncer(held);
    wal.committed();
    expect(held.fds).toHaveLength(1);
    expect(fstatSync(held.fds[0]!).ino).toBe(statSync(log).ino);
    held.finish();
    clock += 99;
    wal.committed();
    expect(held.fds).toHaveLength(1);
    clock += 1;
    wal.committed();
    expect(held.fds).toHaveLength(2);
    expect(held.fds[1]).toBe(held.fds[0]);
    held.finish();
    wal.close();
  });

  it('starts no second sync while one runs, however long it takes, and the next an interval after it ended', () => {
    const held = heldSync();
    const wal = syncer(held);
    wal.committed();
    clock += 1_000;
    wal.committed();
    expect(held.fds).toHaveLength(1);
    held.finish();
    clock += 99;
    wal.committed();
    expect(held.fds).toHaveLength(1);
    clock += 1;
    wal.committed();
    expect(held.fds).toHaveLength(2);
    held.finish();
    wal.close();
  });

  it("syncs one store's log at a time in a lane: another store's commit meanwhile starts none, its next one does", () => {
    const held = heldSync();
    const lane = new SyncLane();
    const other = otherLog();
    expectOneAtATime(held, syncer(held, log, { lane }), syncer(held, other, { lane }), other);
  });

  it("shares the process's lane between stores by default", () => {
    const held = heldSync();
    const other = otherLog();
    expectOneAtATime(held, syncer(held, log, { lane: undefined }), syncer(held, other, { lane: undefined }), other);
  });

  it('closes the log when closed idle, and once the running sync ends when closed during one', () => {
    const held = heldSync();
    const lane = new SyncLane();
    const idle = syncer(held, log, { lane });
    idle.committed();
    held.finish();
    expect(openDescriptors(log)).toHaveLength(1);
    idle.close();
    expect(openDescriptors(log)).toHaveLength(0);

    const busy = syncer(held, log, { lane });
    busy.committed();
    busy.close();
    expect(openDescriptors(log)).toHaveLength(1);
    held.finish();
    expect(openDescriptors(log)).toHaveLength(0);
    clock += 1_000;
    busy.committed();
    expect(held.fds).toHaveLength(2);
  });

  it('waits an interval before trying again when the log cannot be opened, and never throws', async () => {
    await rm(log);
    const held = heldSync();
    const wal = syncer(held);
    expect(() => wal.committed()).not.toThrow();
    writeFileSync(log, 'frames');
    clock += 50;
    wal.committed();
    expect(held.fds).toHaveLength(0);
    clock += 50;
    wal.committed();
    expect(held.fds).toHaveLength(1);
    held.finish();
    wal.close();
  });

  it("syncs a file connection's log after its commits, with the real fdatasync, and closes it with the connection", async () => {
    const file = join(dir, 'real.sqlite');
    const synced: { ino: number; error: NodeJS.ErrnoException | null }[] = [];
    let ended!: () => void;
    const syncEnded = new Promise<void>((resolve) => (ended = resolve));
    const connection = new Connection(file, {
      exclusive: true,
      walSync: {
        intervalMs: 60_000,
        sync: (fd, done) => {
          const ino = fstatSync(fd).ino;
          fdatasync(fd, (error) => {
            synced.push({ ino, error });
            done(error);
            ended();
          });
        },
      },
    });
    await connection.transaction('write', () => connection.exec('CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)'));
    await connection.transaction('write', () => connection.change('INSERT INTO t (id) VALUES (?)', 'a'));
    await syncEnded;
    expect(synced).toEqual([{ ino: statSync(`${file}-wal`).ino, error: null }]);
    connection.close();
    expect(openDescriptors(`${file}-wal`)).toHaveLength(0);
  });

  it('syncs nothing for an in-memory database', async () => {
    const held = heldSync();
    const connection = new Connection(':memory:', { walSync: { sync: held.sync } });
    await connection.transaction('write', () => connection.exec('CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)'));
    await connection.transaction('write', () => connection.change('INSERT INTO t (id) VALUES (?)', 'a'));
    expect(held.fds).toHaveLength(0);
    connection.close();
  });
});
