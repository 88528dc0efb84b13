/**
 * Export of stored records to JSON Lines or CSV, streamed: records are read a batch at a time
 * (a dataset's page, a PostgreSQL keyset batch) and written as they come, so a million items
 * take the memory of one batch. CSV needs its columns before the first row, so it reads the
 * records twice: once for the column names, once to write.
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Dataset } from '@crawlee/core';
import { datasetItems } from './datasets.js';

export type ExportFormat = 'jsonl' | 'csv';

export interface ExportOptions {
    dataset: Dataset;
    format: ExportFormat;
    /** A file path; default: standard output. */
    out?: string;
    /** Items read per page. Default: 1000. */
    pageSize?: number;
}

export interface ExportRecordsOptions {
    /** Reads the records from the first, in order; called once for JSON Lines, twice for CSV. */
    records: () => AsyncIterable<Record<string, unknown>>;
    format: ExportFormat;
    /** A file path; default: standard output. */
    out?: string;
}

/** Writes every item of the dataset; returns how many. */
export async function exportDataset({ dataset, format, out, pageSize = 1000 }: ExportOptions): Promise<number> {
    return exportRecords({ records: () => datasetItems(dataset, pageSize), format, out });
}

/**
 * Writes every record; returns how many. Rejects when the file cannot be opened or written: the
 * pipeline stops reading then, and ends the file (never standard output) when all is written.
 */
export async function exportRecords({ records, format, out }: ExportRecordsOptions): Promise<number> {
    let count = 0;
    async function* lines(): AsyncGenerator<string> {
        if (format === 'jsonl') {
            for await (const item of records()) {
                yield `${JSON.stringify(item)}\n`;
                count += 1;
            }
            return;
        }
        const columns = new Set<string>();
        for await (const item of records()) for (const key of Object.keys(item)) columns.add(key);
        yield `${[...columns].map(csvCell).join(',')}\r\n`;
        for await (const item of records()) {
            yield `${[...columns].map((column) => csvCell(item[column])).join(',')}\r\n`;
            count += 1;
        }
    }
    // Backpressure is the pipeline's: a slow disk or pipe pauses the reading, so memory holds one batch.
    await pipeline(Readable.from(lines()), out ? createWriteStream(out) : process.stdout, { end: out !== undefined });
    return count;
}

/** One CSV cell (RFC 4180): quoted when needed; lists and objects as JSON; missing as empty. */
export function csvCell(value: unknown): string {
    if (value === undefined || value === null) return '';
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
