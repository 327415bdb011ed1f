/** A plain-text table with a header row, for script reports (numbers right-aligned). */
export function formatTable(columns: string[], rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map((cell) => String(cell)));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((row) => (row[index] ?? '').length)));
  const numeric = columns.map((_, index) => rows.length > 0 && rows.every((row) => typeof row[index] === 'number'));
  const line = (values: string[]) =>
    values
      .map((value, index) => (numeric[index] ? value.padStart(widths[index]!) : value.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  return [line(columns), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].map((text) => `${text}\n`).join('');
}
