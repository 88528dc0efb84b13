/**
 * The recrawl tests' world: a fixture shop that changes between runs (prices, new, removed and
 * moved products; generations.ts) with ETag on a third of its pages, Last-Modified on a third and
 * neither on the rest (validators.ts), and the change log that a recrawl of it must report, made
 * from the shop's own account of what it changed.
 */
import type { CatalogChanges, ShopOptions } from '../../src/demo/shop.js';

export const CHANGING_SHOP: ShopOptions = {
    seed: 52,
    products: 400,
    categories: 4,
    validators: true,
    scriptOnlyRate: 0,
    transientFailureRate: 0,
    notFoundLinks: 0,
};

/** One line per change, sorted: `new <url>`, `changed <url> <field>:<old>→<new>`, `removed <url> [→ <url>]`. */
export function expectedChangeLog(changes: CatalogChanges, shopUrl: string): string[] {
    return [
        ...changes.added.map((path) => `new ${shopUrl}${path}`),
        ...changes.moved.map(({ to }) => `new ${shopUrl}${to}`),
        ...changes.changed.map(
            ({ path, fields }) =>
                `changed ${shopUrl}${path} ${Object.entries(fields)
                    .map(([field, { old, new: now }]) => `${field}:${JSON.stringify(old)}→${JSON.stringify(now)}`)
                    .join(' ')}`,
        ),
        ...changes.removed.map((path) => `removed ${shopUrl}${path}`),
        ...changes.moved.map(({ from, to }) => `removed ${shopUrl}${from} → ${shopUrl}${to}`),
    ].sort();
}

/** The records `npm run export -- --format jsonl` wrote to standard output. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
    return stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The change log's records as the lines of `expectedChangeLog`. */
export function changeLogLines(records: readonly Record<string, unknown>[]): string[] {
    return records
        .map((record) => {
            const url = String(record._url);
            if (record._change === 'removed')
                return `removed ${url}${record._movedTo ? ` → ${String(record._movedTo)}` : ''}`;
            if (record._change === 'changed') {
                const diff = record._diff as Record<string, { old: unknown; new: unknown }>;
                const fields = Object.entries(diff)
                    .map(([field, { old, new: now }]) => `${field}:${JSON.stringify(old)}→${JSON.stringify(now)}`)
                    .join(' ');
                return `changed ${url} ${fields}`;
            }
            return `${String(record._change)} ${url}`;
        })
        .sort();
}

/** Items as a fresh crawl would store them: without what says when they were fetched and how they changed. */
export function comparable(items: readonly Record<string, unknown>[]): string[] {
    return items.map(({ _change, _diff, _fetchedAt, ...item }) => JSON.stringify(item)).sort();
}
