/**
 * A protobuf writer for the OTLP messages this package exports: one growing
 * buffer, written in place. The SDK's path (an OTLP object tree per span,
 * then protobufjs, which allocates an operation per field) made dozens of
 * short-lived objects per span; here a span costs its bytes and nothing else.
 */

/** Wire types of the protobuf encoding. */
export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

const TWO_POW_23 = 8_388_608;
const TWO_POW_32 = 4_294_967_296;

/** Bytes of `value` (a non-negative integer below 2^53) as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

export class ProtoWriter {
  #buf: Buffer;
  #pos = 0;

  constructor(initialBytes = 16 * 1024) {
    this.#buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#pos;
  }

  /** Forgets what was written; the buffer is kept for the next message. */
  reset(): void {
    this.#pos = 0;
  }

  /** A copy of the bytes written (the writer's buffer is reused). */
  bytes(): Buffer {
    return Buffer.from(this.#buf.subarray(0, this.#pos));
  }

  /** The bytes written, without a copy: valid until the next write or reset. */
  view(): Buffer {
    return this.#buf.subarray(0, this.#pos);
  }

  #ensure(extra: number): void {
    const needed = this.#pos + extra;
    if (needed <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  /** A non-negative integer below 2^53. */
  varint(value: number): void {
    this.#ensure(8);
    const buf = this.#buf;
    let pos = this.#pos;
    while (value >= 128) {
      // `& 127` keeps the low bits exactly: ToInt32 is modular.
      buf[pos++] = (value & 127) | 128;
      value = Math.floor(value / 128);
    }
    buf[pos++] = value;
    this.#pos = pos;
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  uint(field: number, value: number): void {
    this.tag(field, VARINT);
    this.varint(value);
  }

  /** An int64 field: negative values take ten bytes of two's complement, as the encoding wants. */
  int64(field: number, value: number): void {
    this.tag(field, VARINT);
    if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      this.varint(value);
      return;
    }
    let big = BigInt.asUintN(64, BigInt(Math.trunc(value)));
    this.#ensure(10);
    while (big >= 128n) {
      this.#buf[this.#pos++] = Number(big & 127n) | 128;
      big >>= 7n;
    }
    this.#buf[this.#pos++] = Number(big);
  }

  bool(field: number, value: boolean): void {
    this.tag(field, VARINT);
    this.varint(value ? 1 : 0);
  }

  fixed32(field: number, value: number): void {
    this.tag(field, FIXED32);
    this.#ensure(4);
    this.#buf.writeUInt32LE(value >>> 0, this.#pos);
    this.#pos += 4;
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64);
    this.#ensure(8);
    this.#buf.writeDoubleLE(value, this.#pos);
    this.#pos += 8;
  }

  /**
   * A fixed64 of nanoseconds since the epoch from the SDK's `[seconds,
   * nanoseconds]`, without a BigInt: seconds × 10^9 is (seconds × 1953125)
   * × 2^9, whose first factor stays below 2^53 until the year 2^53 / 1953125 s.
   */
  hrTime(field: number, time: readonly [number, number]): void {
    this.tag(field, FIXED64);
    const scaled = time[0] * 1_953_125;
    let low = (scaled % TWO_POW_23) * 512 + time[1];
    let high = Math.floor(scaled / TWO_POW_23);
    if (low >= TWO_POW_32) {
      high += Math.floor(low / TWO_POW_32);
      low %= TWO_POW_32;
    }
    this.#ensure(8);
    this.#buf.writeUInt32LE(low, this.#pos);
    this.#buf.writeUInt32LE(high >>> 0, this.#pos + 4);
    this.#pos += 8;
  }

  string(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED);
    const length = value.length;
    if (length < 128) {
      // Short ASCII, the usual name or attribute: copied by hand, its length known up front.
      this.#ensure(length + 1);
      const buf = this.#buf;
      const start = this.#pos;
      let pos = start + 1;
      let ascii = true;
      for (let i = 0; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code >= 128) {
          ascii = false;
          break;
        }
        buf[pos++] = code;
      }
      if (ascii) {
        buf[start] = length;
        this.#pos = pos;
        return;
      }
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.varint(bytes);
    this.#ensure(bytes);
    this.#pos += this.#buf.write(value, this.#pos, 'utf8');
  }

  /** A bytes field from hex (trace and span ids). */
  hex(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED);
    const bytes = value.length >>> 1;
    this.varint(bytes);
    this.#ensure(bytes);
    const written = this.#buf.write(value, this.#pos, bytes, 'hex');
    // An id that is not hex would leave bytes unwritten: zeros, never stale bytes of an earlier span.
    if (written < bytes) this.#buf.fill(0, this.#pos + written, this.#pos + bytes);
    this.#pos += bytes;
  }

  bytesField(field: number, value: Uint8Array): void {
    this.tag(field, LENGTH_DELIMITED);
    this.raw(value, true);
  }

  /** Bytes as they are; with `prefixed`, after their length. */
  raw(value: Uint8Array, prefixed = false): void {
    if (prefixed) this.varint(value.length);
    this.#ensure(value.length);
    this.#buf.set(value, this.#pos);
    this.#pos += value.length;
  }

  /** Starts an embedded message; returns what {@link end} takes. Its length is reserved as one byte. */
  begin(field: number): number {
    this.tag(field, LENGTH_DELIMITED);
    this.#ensure(1);
    return this.#pos++;
  }

  /** Ends the message {@link begin} started, moving its body when its length takes more than one byte. */
  end(start: number): void {
    const length = this.#pos - start - 1;
    if (length < 128) {
      this.#buf[start] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.#ensure(extra);
    this.#buf.copyWithin(start + 1 + extra, start + 1, this.#pos);
    const end = this.#pos + extra;
    this.#pos = start;
    this.varint(length);
    this.#pos = end;
  }
}
