import type { MsgHdrs } from '@nats-io/transport-node';

/**
 * Header values of a received message, read from its raw header block.
 *
 * `msg.headers` decodes the whole block into nats-core's `MsgHdrs`: the
 * block split into lines, and each header appended (its key rebuilt in
 * canonical form to check it, every key searched, the value tested with a
 * RegExp). The services read one to six headers of every event and request
 * they receive, about 4% of the bytes a run allocated. Here the block is
 * decoded to a string once and a key found with `indexOf`.
 *
 * The raw block is nats-core's own (`MsgImpl`: `_rdata`, the header length
 * in `_msg.hdr`), reached through the wrappers that hold a `msg` (a
 * JetStream message, a service request). A message of another shape, or
 * one whose headers were decoded already, is read through `msg.headers` as
 * before. The answer is nats-core's `headers.get(key)` with exact matching:
 * the first value of the first line naming `key` exactly, trimmed
 * (`incoming-headers.test.ts` holds the two together).
 */

interface RawMessage {
  readonly _msg: { readonly hdr: number };
  readonly _rdata: Uint8Array;
  readonly _headers?: MsgHdrs;
}

function isRawMessage(value: unknown): value is RawMessage {
  const m = value as Partial<RawMessage> | null | undefined;
  return typeof m?._msg?.hdr === 'number' && m._rdata instanceof Uint8Array;
}

/** A received message: nats-core's, or a wrapper holding one in `msg`. */
export interface ReceivedMessage {
  readonly headers?: MsgHdrs | undefined;
}

/** The decoded header blocks of the messages read so far (a message is read by several headers). */
const blocks = new WeakMap<object, string>();

const NO_HEADERS = '';

function blockOf(raw: RawMessage): string {
  let block = blocks.get(raw);
  if (block === undefined) {
    const length = raw._msg.hdr;
    block =
      length > 0
        ? Buffer.from(raw._rdata.buffer, raw._rdata.byteOffset, Math.min(length, raw._rdata.byteLength)).toString(
            'utf8',
          )
        : NO_HEADERS;
    blocks.set(raw, block);
  }
  return block;
}

/** The value of `key` in a header block (`NATS/1.0…\r\nKey: value\r\n…`), or undefined. */
export function valueInBlock(block: string, key: string): string | undefined {
  const needle = `\r\n${key}:`;
  const at = block.indexOf(needle);
  if (at < 0) return undefined;
  const start = at + needle.length;
  const end = block.indexOf('\r\n', start);
  return block.slice(start, end < 0 ? block.length : end).trim();
}

/** The header `key` of `message` (exact name), or undefined when it has none. */
export function headerOf(message: ReceivedMessage, key: string): string | undefined {
  const inner = (message as { msg?: unknown }).msg;
  const raw = isRawMessage(message) ? message : isRawMessage(inner) ? inner : undefined;
  if (raw === undefined || raw._headers !== undefined) {
    const h = message.headers;
    return h?.has(key) === true ? h.get(key) : undefined;
  }
  return valueInBlock(blockOf(raw), key);
}
