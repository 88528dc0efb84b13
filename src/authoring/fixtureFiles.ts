/**
 * A site's fixtures: saved pages in `test/fixtures/<site>/`, each `<name>.html` with a
 * `<name>.expected.json` beside it that says where the page was read from and what its route must
 * make of it. `npm run try -- --save-fixture` writes both; test/routes/fixtures.test.ts runs every
 * one through its route, so a site is covered by `npm test` the moment its fixtures exist.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Renderer } from '../site/site.js';
import type { PageTrial } from './pageTrial.js';

/** What a fixture page must give. */
export interface FixtureExpectation {
    /** The URL the page was read from: its links resolve against it and routes `match` it. */
    url: string;
    /** The route that handles the page. */
    label: string;
    /** Which stage's HTML the page is (the two are parsed differently). Default: `http`. */
    renderer?: Renderer;
    /** The saved page, relative to this file. Default: the `.html` file of the same name. */
    page?: string;
    /** The records that pass the schema, as the dataset stores them. */
    records: Record<string, unknown>[];
    /** Per record the schema rejects, its issues (`price: Invalid input: …`). Default: none. */
    invalid?: string[][];
    /** The links the page's enqueue rules would follow, normalized, by label. Not checked when absent. */
    links?: Record<string, string[]>;
}

export interface Fixture {
    /** The `.expected.json` file. */
    file: string;
    /** The saved page. */
    pageFile: string;
    expected: FixtureExpectation;
}

const EXPECTED = '.expected.json';

/** A fixture file as written: what it may hold, so a hand edit gone wrong names its file and key. */
const EXPECTATION_FILE = z.strictObject({
    url: z.string(),
    label: z.string(),
    renderer: z.enum(['http', 'browser']).optional(),
    page: z.string().optional(),
    records: z.array(z.record(z.string(), z.unknown())),
    invalid: z.array(z.array(z.string())).optional(),
    links: z.record(z.string(), z.array(z.string())).optional(),
}) satisfies z.ZodType<FixtureExpectation>;

/** A fixture file's expectation; a file that is not one throws, naming the file and what is wrong. */
function parseExpectation(file: string, text: string): FixtureExpectation {
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch (error) {
        throw new Error(`${file}: not JSON: ${(error as Error).message}`);
    }
    const parsed = EXPECTATION_FILE.safeParse(json);
    if (parsed.success) return parsed.data;
    const [issue] = parsed.error.issues;
    throw new Error(`${file}: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? parsed.error.message}`);
}

/** The fixtures in `dir` (none when it does not exist), by file name. */
export async function readFixtures(dir: string): Promise<Fixture[]> {
    const files = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [];
        throw error;
    });
    return Promise.all(
        files
            .filter((file) => file.endsWith(EXPECTED))
            .sort()
            .map(async (name) => {
                const file = join(dir, name);
                const expected = parseExpectation(file, await readFile(file, 'utf8'));
                return {
                    file,
                    pageFile: resolve(dir, expected.page ?? `${name.slice(0, -EXPECTED.length)}.html`),
                    expected,
                };
            }),
    );
}

/** What a trial shows, as a fixture expects it. */
export function expectationOf(trial: PageTrial): FixtureExpectation {
    const links: Record<string, string[]> = {};
    for (const link of trial.links) {
        if (link.fate !== 'follow' || !link.url) continue;
        const urls = links[link.label] ?? [];
        urls.push(link.url);
        links[link.label] = urls;
    }
    return {
        url: trial.url,
        label: trial.label,
        ...(trial.renderer === 'http' ? {} : { renderer: trial.renderer }),
        // Through JSON, as the file holds it: a Date or an undefined field compares as it was saved.
        records: JSON.parse(JSON.stringify(trial.records)) as Record<string, unknown>[],
        ...(trial.verdict.invalid.length > 0 ? { invalid: trial.verdict.invalid.map(({ issues }) => issues) } : {}),
        links,
    };
}

/**
 * Where `actual` differs from `expected`, one line each
 * (`records[0].price: expected 51.77, got 5177`); empty when they agree.
 */
export function fixtureDifferences(expected: FixtureExpectation, actual: FixtureExpectation): string[] {
    const differences: string[] = [];
    const differ = (path: string, want: unknown, got: unknown) => {
        if (!isDeepStrictEqual(want, got)) differences.push(`${path}: expected ${shown(want)}, got ${shown(got)}`);
    };
    const recordCount = Math.max(expected.records.length, actual.records.length);
    for (let index = 0; index < recordCount; index += 1) {
        const want = expected.records[index];
        const got = actual.records[index];
        if (want === undefined || got === undefined) {
            differ(`records[${index}]`, want, got);
            continue;
        }
        for (const field of new Set([...Object.keys(want), ...Object.keys(got)]))
            differ(`records[${index}].${field}`, want[field], got[field]);
    }
    differ('invalid', expected.invalid ?? [], actual.invalid ?? []);
    if (expected.links) {
        for (const label of new Set([...Object.keys(expected.links), ...Object.keys(actual.links ?? {})])) {
            differ(`links.${label}`, expected.links[label] ?? [], actual.links?.[label] ?? []);
        }
    }
    return differences;
}

/**
 * Saves a page and what it must give as fixture `name` of the site in `dir`; returns the two files,
 * and `replaced` when a fixture of that name was there (the command says so: its expected file may
 * have been edited by hand).
 */
export async function saveFixture(
    dir: string,
    name: string,
    html: string,
    expected: FixtureExpectation,
): Promise<{ pageFile: string; file: string; replaced: boolean }> {
    const pageFile = join(dir, `${name}.html`);
    const file = join(dir, `${name}${EXPECTED}`);
    await mkdir(dirname(file), { recursive: true });
    const replaced = existsSync(file);
    await writeFile(pageFile, html);
    await writeFile(file, `${JSON.stringify(expected, null, 2)}\n`);
    return { pageFile, file, replaced };
}

/**
 * A fixture name for a page URL, from its path and query: `products-widget-42` for
 * `/products/widget-42`, `category-kitchen-page-2` for `/category/kitchen?page=2`, `index` for `/`.
 */
export function fixtureName(url: string): string {
    const { pathname, search } = new URL(url);
    const name = [...pathname.split('/'), search.slice(1)]
        .map((segment) => basename(segment, '.html'))
        .filter((segment) => segment !== '' && segment !== 'index')
        .join('-')
        .replace(/[^a-zA-Z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(-80);
    return name || 'index';
}

function shown(value: unknown): string {
    const text = value === undefined ? 'nothing' : JSON.stringify(value);
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
