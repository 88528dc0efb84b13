/** A plain aligned text table: numbers right-aligned, text left-aligned, null as '-'. */
import type { TableRow } from './suite.js';

export function formatTable(title: string, rows: readonly TableRow[]): string {
    if (rows.length === 0) return `${title}: no results\n`;
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    const cells = rows.map((row) => columns.map((column) => cellText(row[column])));
    const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
    const numeric = columns.map((column) => rows.every((row) => typeof row[column] !== 'string'));
    const pad = (text: string, i: number) => (numeric[i] ? text.padStart(widths[i]!) : text.padEnd(widths[i]!));
    const lines = [
        columns.map(pad).join('  '),
        widths.map((w) => '-'.repeat(w)).join('  '),
        ...cells.map((line) => line.map(pad).join('  ')),
    ];
    return `${title}\n${lines.map((line) => line.trimEnd()).join('\n')}\n`;
}

function cellText(value: string | number | null | undefined): string {
    if (value === null || value === undefined) return '-';
    // Medians of an even count are means of two figures: 286.54999999999995 reads as 286.55.
    return typeof value === 'number' ? String(Number(value.toPrecision(10))) : value;
}
