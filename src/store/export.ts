/**
 * Export of a dataset to JSON Lines or CSV, streamed: items are read a page at a time and
 * written as they come, so a million items take the memory of one page. CSV needs its columns
 * before the first row, so it reads the dataset twice: once for the column names, once to write.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Dataset } from '@crawlee/core';

export type ExportFormat = 'jsonl' | 'csv';

export interface ExportOptions {
    dataset: Dataset;
    format: ExportFormat;
    /** A file path; default: standard output. */
    out?: string;
    /** Items read per page. Default: 1000. */
    pageSize?: number;
}

/** Writes every item of the dataset; returns how many. */
export async function exportDataset({ dataset, format, out, pageSize = 1000 }: ExportOptions): Promise<number> {
    const stream = out ? createWriteStream(out) : process.stdout;
    let count = 0;
    try {
        if (format === 'jsonl') {
            for await (const item of items(dataset, pageSize)) {
                await write(stream, `${JSON.stringify(item)}\n`);
                count += 1;
            }
        } else {
            const columns = new Set<string>();
            for await (const item of items(dataset, pageSize)) for (const key of Object.keys(item)) columns.add(key);
            await write(stream, `${[...columns].map(csvCell).join(',')}\r\n`);
            for await (const item of items(dataset, pageSize)) {
                await write(stream, `${[...columns].map((column) => csvCell(item[column])).join(',')}\r\n`);
                count += 1;
            }
        }
    } finally {
        if (out) {
            stream.end();
            await once(stream, 'finish');
        }
    }
    return count;
}

/** The dataset's items in order, a page at a time. */
async function* items(dataset: Dataset, pageSize: number): AsyncGenerator<Record<string, unknown>> {
    for (let offset = 0; ; offset += pageSize) {
        const page = await dataset.getData({ offset, limit: pageSize });
        yield* page.items;
        if (page.items.length < pageSize) return;
    }
}

/** One CSV cell (RFC 4180): quoted when needed; lists and objects as JSON; missing as empty. */
export function csvCell(value: unknown): string {
    if (value === undefined || value === null) return '';
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Writes with backpressure, so a slow disk or pipe does not make the export hold everything in memory. */
async function write(stream: Writable, chunk: string): Promise<void> {
    if (!stream.write(chunk)) await once(stream, 'drain');
}
