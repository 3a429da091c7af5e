import { closeSync, fdatasync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * The append side of one embedded datafile. nedb's own persistence opens,
 * appends to and closes the file for every write (three thread-pool round
 * trips and a FileHandle each); this keeps the file open and appends each
 * write's lines with one synchronous `write(2)` to the page cache (a few
 * microseconds), so a write is in the operating system when its promise
 * resolves, exactly as with nedb's own appends. Durability against a machine
 * crash comes from {@link AppendLog.sync} (`fdatasync`), which the store
 * calls on a timer. Internal to this package.
 */
export class AppendLog {
  readonly filename: string;
  readonly #mode: number;
  #fd: number | undefined;
  /** The file's size as this log wrote it: a failed write is cut back to it. */
  #size = 0;
  #dirty = false;
  #syncing: Promise<void> | undefined;

  constructor(filename: string, mode = 0o644) {
    this.filename = filename;
    this.#mode = mode;
  }

  /** True when lines were appended since the last {@link sync}. */
  get dirty(): boolean {
    return this.#dirty;
  }

  /**
   * Appends `text` (whole lines, each ending in `\n`). A failed write is cut
   * back so that no partial line stays in the middle of the file; the error
   * is rethrown.
   */
  append(text: string): void {
    if (text.length === 0) return;
    const fd = this.#open();
    const bytes = Buffer.from(text, 'utf8');
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (error) {
      if (written > 0) this.#cutBack(fd);
      throw error;
    }
    this.#size += bytes.length;
    this.#dirty = true;
  }

  /** Flushes appended lines to the device (`fdatasync`); one at a time. */
  sync(): Promise<void> {
    if (this.#syncing !== undefined) return this.#syncing;
    const fd = this.#fd;
    if (fd === undefined || !this.#dirty) return Promise.resolve();
    this.#dirty = false;
    this.#syncing = new Promise<void>((resolve, reject) => {
      fdatasync(fd, (error) => {
        this.#syncing = undefined;
        if (error === null) resolve();
        else {
          this.#dirty = true;
          reject(error);
        }
      });
    });
    return this.#syncing;
  }

  /**
   * Closes the file (after any sync under way). The next append opens it
   * again: compaction replaces the file by a rename, so the open descriptor
   * would still point at the old one.
   */
  async detach(): Promise<void> {
    await this.#syncing?.catch(() => undefined);
    const fd = this.#fd;
    this.#fd = undefined;
    this.#dirty = false;
    if (fd !== undefined) closeSync(fd);
  }

  #open(): number {
    if (this.#fd === undefined) {
      const fd = openSync(this.filename, 'a', this.#mode);
      this.#size = fstatSync(fd).size;
      this.#fd = fd;
    }
    return this.#fd;
  }

  #cutBack(fd: number): void {
    try {
      ftruncateSync(fd, this.#size);
    } catch {
      // The load tolerates a torn last line (see repairTornTail) and a small corrupt fraction.
    }
  }
}

/** How much of the file's end {@link repairTornTail} reads at a time. */
const TAIL_CHUNK = 64 * 1024;

function isJson(bytes: Buffer): boolean {
  try {
    JSON.parse(bytes.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Mends the end of a datafile before it is loaded. Appends are whole lines,
 * so bytes after the last `\n` are a write that a crash interrupted (never
 * acknowledged): they are cut off. nedb would otherwise count the line as
 * corrupt (refusing a small file where that is more than 10% of the lines)
 * and, worse, append the next write to it, corrupting that one too. A last
 * line that is complete JSON without its `\n` (a hand-edited file, or a
 * crash just before the newline) is kept and terminated instead. Returns the
 * bytes dropped (0 for a missing or sound file).
 */
export async function repairTornTail(filename: string): Promise<number> {
  let handle;
  try {
    handle = await open(filename, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    let keep = 0;
    const buffer = Buffer.alloc(TAIL_CHUNK);
    for (let end = size; end > 0;) {
      const start = Math.max(0, end - TAIL_CHUNK);
      const { bytesRead } = await handle.read(buffer, 0, end - start, start);
      const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline !== -1) {
        keep = start + newline + 1;
        break;
      }
      end = start;
    }
    if (keep === size) return 0;
    const tail = Buffer.alloc(size - keep);
    await handle.read(tail, 0, tail.length, keep);
    if (isJson(tail)) {
      await handle.write('\n', size);
      return 0;
    }
    await handle.truncate(keep);
    return size - keep;
  } finally {
    await handle.close();
  }
}
