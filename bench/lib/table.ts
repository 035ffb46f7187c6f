/**
 * @module bench/lib/table
 * Markdown tables and number formatting for benchmark reports.
 */

export type Cell = string | number | null | undefined;

/** Formats a number with fixed decimals; null/undefined/NaN become an em dash. */
export function num(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A markdown table with numeric-looking columns right-aligned. */
export function markdownTable(headers: string[], rows: Cell[][]): string {
  const text = rows.map((row) => headers.map((_, i) => (row[i] === null || row[i] === undefined ? '—' : String(row[i]))));
  const numeric = headers.map((_, i) => text.length > 0 && text.every((row) => /^[-+]?[\d,.]+( ?[×%])?$|^—$/.test(row[i])));
  const widths = headers.map((h, i) => Math.max(3, h.length, ...text.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(headers), rule, ...text.map(line)].join('\n');
}

/** "MET" or "MISSED" with the figure and the target, for the lines under a table. */
export function verdict(label: string, value: number, target: number): string {
  return `${label}: ${num(value, 2)} (target ≥ ${num(target, 2)}) — **${value >= target ? 'MET' : 'MISSED'}**`;
}
