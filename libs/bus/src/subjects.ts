import { ServiceError } from '@ars/contracts';

/**
 * Subject layout of the bus. Identity strings become base64url tokens so that
 * any string (empty, dotted, wildcard-shaped, unicode) is subject-safe and
 * two different identities never share a subject.
 */

/** The token standing for an empty string (never produced by a non-empty one). */
export const EMPTY_TOKEN = '_';
/** Prefix of every event subject; the EVENTS stream binds `ars.ev.>`. */
export const EVENT_SUBJECT_PREFIX = 'ars.ev';
/** Prefix of every RPC subject. */
export const RPC_SUBJECT_PREFIX = 'ars.rpc';
/** Prefix of the RUNS work queue; the RUNS stream binds `ars.runs.>`. */
export const RUNS_SUBJECT_PREFIX = 'ars.runs';
/** Prefix of the per-run control inboxes. */
export const CONTROL_SUBJECT_PREFIX = 'ars.ctl';
/**
 * Longest subject this package builds. nats-server's default control line is
 * 4096 bytes and a longer one closes the whole connection, so over-long
 * identities are refused here instead.
 */
export const MAX_SUBJECT_LENGTH = 3072;

const TOKEN_RE = /^[A-Za-z0-9_-]+$/;
const NAME_TOKEN_RE = /^[A-Za-z0-9_-]+$/;
const EVENT_TYPE_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * WTF-8: UTF-8 extended to lone surrogates, so that every JavaScript string,
 * even one carrying an unpaired surrogate, maps to distinct bytes.
 */
function toWtf8(s: string): Uint8Array {
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return Uint8Array.from(out);
}

function fromWtf8(bytes: Uint8Array): string {
  let s = '';
  let i = 0;
  const cont = (k: number): number => {
    const b = bytes[i + k];
    if (b === undefined || (b & 0xc0) !== 0x80) throw new Error('truncated sequence');
    return b & 0x3f;
  };
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    let cp: number;
    let n: number;
    if (b < 0x80) [cp, n] = [b, 1];
    else if ((b & 0xe0) === 0xc0) [cp, n] = [((b & 0x1f) << 6) | cont(1), 2];
    else if ((b & 0xf0) === 0xe0) [cp, n] = [((b & 0x0f) << 12) | (cont(1) << 6) | cont(2), 3];
    else if ((b & 0xf8) === 0xf0) [cp, n] = [((b & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4];
    else throw new Error('invalid lead byte');
    s += String.fromCodePoint(cp);
    i += n;
  }
  return s;
}

/**
 * Encodes any string as one subject token: base64url of its (WTF-8) bytes,
 * `_` for the empty string. The alphabet `[A-Za-z0-9_-]` has no `.`, `*`,
 * `>` or whitespace.
 */
export function encodeToken(s: string): string {
  if (s === '') return EMPTY_TOKEN;
  return Buffer.from(toWtf8(s)).toString('base64url');
}

/** Inverse of {@link encodeToken}; throws on a token it could not have produced. */
export function decodeToken(token: string): string {
  if (token === EMPTY_TOKEN) return '';
  if (!TOKEN_RE.test(token) || token.length % 4 === 1) throw new Error(`not an identity token: ${token.slice(0, 64)}`);
  const s = fromWtf8(Buffer.from(token, 'base64url'));
  if (encodeToken(s) !== token) throw new Error(`not a canonical identity token: ${token.slice(0, 64)}`);
  return s;
}

function checkLength(subject: string): string {
  if (subject.length > MAX_SUBJECT_LENGTH) {
    throw new ServiceError(
      'invalid_request',
      `identity too long: the subject would exceed ${MAX_SUBJECT_LENGTH} bytes`,
    );
  }
  return subject;
}

function checkEventType(type: string): string {
  if (!EVENT_TYPE_RE.test(type)) {
    throw new ServiceError('internal', `not a subject-safe event type: ${type.slice(0, 64)}`);
  }
  return type;
}

/**
 * The header carrying an event's run as an encoded token (`_` for none).
 * The run is not part of the subject: nats-server keeps state for every
 * distinct subject a stream holds, so a run token in the subject made the
 * server grow by about 3 KiB per run for as long as the events are retained
 * (measured: 30,000 runs of 22 events, +102 MiB with the run in the subject,
 * +5 MiB without). Readers that select one run match this header.
 */
export const EVENT_RUN_HEADER = 'Ars-Run';

/** The identity and type of one event, as its subject carries them. */
export interface EventSubjectParts {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly type: string;
}

/** `ars.ev.<tenant>.<user>.<session>.<type with its dots>`; the run travels in {@link EVENT_RUN_HEADER}. */
export function eventSubject(parts: EventSubjectParts): string {
  const tokens = [parts.tenant, parts.user, parts.session].map(encodeToken);
  return checkLength(`${EVENT_SUBJECT_PREFIX}.${tokens.join('.')}.${checkEventType(parts.type)}`);
}

/** Filter members of {@link eventFilterSubject}; a missing one matches anything. */
export interface EventFilter {
  readonly tenant?: string | undefined;
  readonly user?: string | undefined;
  readonly session?: string | undefined;
  /** An exact type; its last tokens may be `*` or a final `>` (`notification.>`). */
  readonly type?: string | undefined;
}

/**
 * A subject filter over the EVENTS stream: missing identity members become
 * `*`, a missing type `>`. A run is selected by {@link EVENT_RUN_HEADER},
 * not by subject.
 */
export function eventFilterSubject(filter: EventFilter): string {
  const tokens = [filter.tenant, filter.user, filter.session].map((v) => (v === undefined ? '*' : encodeToken(v)));
  let type = '>';
  if (filter.type !== undefined) {
    const parts = filter.type.split('.');
    const ok = parts.every((p, i) => NAME_TOKEN_RE.test(p) || p === '*' || (p === '>' && i === parts.length - 1));
    if (!ok) throw new ServiceError('invalid_request', `not a valid event type filter: ${filter.type.slice(0, 64)}`);
    type = filter.type;
  }
  return checkLength(`${EVENT_SUBJECT_PREFIX}.${tokens.join('.')}.${type}`);
}

/** Inverse of {@link eventSubject}; throws ServiceError `internal` on any other subject. */
export function parseEventSubject(subject: string): EventSubjectParts {
  const tokens = subject.split('.');
  if (tokens.length < 6 || `${tokens[0]}.${tokens[1]}` !== EVENT_SUBJECT_PREFIX) {
    throw new ServiceError('internal', `not an event subject: ${subject.slice(0, 128)}`);
  }
  try {
    const [tenant, user, session] = tokens.slice(2, 5).map((t) => decodeToken(t)) as [string, string, string];
    return { tenant, user, session, type: checkEventType(tokens.slice(5).join('.')) };
  } catch (error) {
    throw new ServiceError('internal', `not an event subject: ${subject.slice(0, 128)}`, { cause: error });
  }
}

function checkName(what: string, value: string): string {
  if (!EVENT_TYPE_RE.test(value)) {
    throw new ServiceError('internal', `not a subject-safe ${what}: ${value.slice(0, 64)}`);
  }
  return value;
}

/** `ars.rpc.<service>.<method>`; the method keeps its dots. */
export function rpcSubject(service: string, method: string): string {
  return `${RPC_SUBJECT_PREFIX}.${checkName('service', service)}.${checkName('method', method)}`;
}

/** `ars.runs.<priority>`: the RUNS work-queue subject of one priority. */
export function runsSubject(priority: number | string): string {
  return `${RUNS_SUBJECT_PREFIX}.${checkName('priority', String(priority))}`;
}

/** `ars.ctl.<encoded task id>`: the control inbox of a live run. */
export function controlSubject(taskId: string): string {
  return checkLength(`${CONTROL_SUBJECT_PREFIX}.${encodeToken(taskId)}`);
}
