/**
 * Terminal styling of the client commands: ANSI colors when the output is a
 * terminal (see `useColor` of config.ts), plain text otherwise.
 */

const CODES = {
  dim: ['\x1b[2m', '\x1b[22m'],
  bold: ['\x1b[1m', '\x1b[22m'],
  red: ['\x1b[31m', '\x1b[39m'],
  green: ['\x1b[32m', '\x1b[39m'],
  yellow: ['\x1b[33m', '\x1b[39m'],
  cyan: ['\x1b[36m', '\x1b[39m'],
  magenta: ['\x1b[35m', '\x1b[39m'],
} as const;

/** A style name of {@link Style}. */
export type StyleName = keyof typeof CODES;

/** Wraps text in a style, or leaves it as it is when colors are off. */
export type Style = Readonly<Record<StyleName, (text: string) => string>>;

/** The styles, colored when `color` is true. */
export function createStyle(color: boolean): Style {
  const entries = Object.entries(CODES).map(([name, [open, close]]) => [
    name,
    color ? (text: string) => `${open}${text}${close}` : (text: string) => text,
  ]);
  return Object.fromEntries(entries) as Style;
}

/** Erases the current terminal line and returns to its start. */
export const ERASE_LINE = '\r\x1b[2K';

/** One line of at most `max` characters: whitespace runs collapsed, an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** A duration for people: `850ms`, `4.2s`, `3m05s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

/** A cost to three significant digits: `$0`, `$0.0015`, `$1.23` in USD, else `0.0015 EUR`. */
export function formatCost(amount: number, currency: string): string {
  const value = amount.toLocaleString('en-US', { maximumSignificantDigits: 3, useGrouping: false });
  return currency === 'USD' || currency === '' ? `$${value}` : `${value} ${currency}`;
}
