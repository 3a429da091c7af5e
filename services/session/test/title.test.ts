import { describe, expect, it } from 'vitest';
import { AUTO_TITLE_MAX, deriveTitle } from '../src/domain/title.ts';

describe('deriveTitle', () => {
  it('takes the first non-blank line with whitespace collapsed', () => {
    expect(deriveTitle('\n   Plan   a\ttrip  \nsecond line')).toBe('Plan a trip');
  });

  it('keeps a short query as it is', () => {
    expect(deriveTitle('Hello')).toBe('Hello');
  });

  it('has no title for a query without visible text', () => {
    expect(deriveTitle(' \n\t\r\n ')).toBeUndefined();
    expect(deriveTitle('')).toBeUndefined();
  });

  it('cuts a long line at a word boundary with an ellipsis', () => {
    const title = deriveTitle('word '.repeat(40))!;
    expect([...title].length).toBeLessThanOrEqual(AUTO_TITLE_MAX);
    expect(title.endsWith('word…')).toBe(true);
  });

  it('cuts a long line without spaces at the limit', () => {
    const title = deriveTitle('x'.repeat(200))!;
    expect([...title]).toHaveLength(AUTO_TITLE_MAX);
    expect(title.endsWith('…')).toBe(true);
  });

  it('counts characters as code points, never splitting one', () => {
    const title = deriveTitle('😀'.repeat(100))!;
    expect([...title]).toHaveLength(AUTO_TITLE_MAX);
    expect(title.isWellFormed()).toBe(true);
  });
});
