/**
 * Plain text tables: columns padded to their widest cell, two spaces apart,
 * the last column left ragged.
 */

/** A table: a header row, then the rows; every row as many cells as the header. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const format = (row: readonly string[]): string =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [header, ...rows].map(format).join('\n') + '\n';
}
