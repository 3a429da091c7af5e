/** Bytes ↔ base64 for artifacts.put and artifacts.get, in the browser (no Buffer), in chunks so large files do not overflow the call stack. */

const CHUNK = 0x8000;

/** Standard base64 (with padding) of some bytes. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

/** The bytes of a standard base64 text; throws on a text that is not base64. */
export function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A size for people: `999 B`, `1.5 KiB`, `2.0 MiB`. */
export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A file name to save an artifact under: its name, else its id, with characters file systems refuse replaced. */
export function downloadName(artifact: { readonly artifact_id: string; readonly name?: string }): string {
  const base = artifact.name !== undefined && artifact.name.trim() !== '' ? artifact.name.trim() : artifact.artifact_id;
  return base.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_');
}
