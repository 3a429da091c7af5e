import { describe, expect, it } from 'vitest';
import { base64ToBytes, bytesToBase64, downloadName, formatBytes } from '../src/artifact-bytes.ts';

describe('artifact bytes', () => {
  it('round-trips bytes through base64, as Node encodes them', () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) % 256);
    const text = bytesToBase64(bytes);
    expect(text).toBe(Buffer.from(bytes).toString('base64'));
    expect(base64ToBytes(text)).toEqual(bytes);
  });

  it('formats sizes in binary units', () => {
    expect([formatBytes(12), formatBytes(1536), formatBytes(3 * 1024 * 1024)]).toEqual(['12 B', '1.5 KiB', '3.0 MiB']);
  });

  it('names a download by the artifact name, else its id, without path separators', () => {
    expect(downloadName({ artifact_id: 'a1', name: 'dir/notes?.txt' })).toBe('dir_notes_.txt');
    expect(downloadName({ artifact_id: 'a1' })).toBe('a1');
  });
});
