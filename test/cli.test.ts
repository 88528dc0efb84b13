/**
 * The command line as a user runs it: `node --import tsx src/main.ts ...` in a child process,
 * against the saved quotes.toscrape.com pages served on loopback. Expected counts are derived
 * from the fixture files, so they follow the fixtures if pages are added.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { load } from 'cheerio';

import { startStaticSite, type StaticSite } from './site/static.js';
import { readDataset } from './helpers/stores.js';
import { type CliResult, ROOT, runCli } from './helpers/cli.js';

const FIXTURES = join(ROOT, 'test/fixtures/quotes.toscrape.com');

/** A fresh storage directory, removed when the test ends. */
async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-cli-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** The CLI failed as a config error: exit code 2 and one `dragnet:` line on stderr, no stack trace. */
function assertConfigError(result: CliResult, message: RegExp): void {
    assert.equal(result.code, 2, `exit code; stderr: ${result.stderr}`);
    const lines = result.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `one line on stderr: ${result.stderr}`);
    assert.match(lines[0] ?? '', /^dragnet: /);
    assert.ok(!result.stderr.includes('    at '), 'no stack trace');
    assert.match(lines[0] ?? '', message);
    assert.equal(result.stdout, '');
}

/** Whether the static server has a page at this URL path (`/x/` or `/x` is `x/index.html`). */
function hasFixture(path: string): boolean {
    return existsSync(join(FIXTURES, path, 'index.html'));
}

/**
 * What a crawl from `startPath` must find, read from the fixture files: the list pages reached
 * through the "Next" links, the next link that has no page, the quotes on the pages (the
 * `div.quote`s, or the inline `var data` the JS pages render from), and the author pages linked.
 */
function expectedCrawl(startPath: string) {
    const listPages: string[] = [];
    const missingPages: string[] = [];
    const quoteTexts: string[] = [];
    const authorPaths = new Set<string>();
    for (let path: string | undefined = startPath; path; ) {
        if (!hasFixture(path)) {
            missingPages.push(path);
            break;
        }
        listPages.push(path);
        const html = readFileSync(join(FIXTURES, path, 'index.html'), 'utf8');
        const $ = load(html);
        const inline = /var data = (\[[\s\S]*?\n\]);/.exec(html)?.[1];
        const texts = inline
            ? (JSON.parse(inline) as { text: string }[]).map((quote) => quote.text)
            : $('div.quote span.text')
                  .toArray()
                  .map((element) => $(element).text());
        quoteTexts.push(...texts);
        $('div.quote a[href^="/author/"]').each((_, element) => void authorPaths.add($(element).attr('href') ?? ''));
        path = $('li.next > a').attr('href');
    }
    const authors = [...authorPaths].sort();
    return {
        listPages,
        missingPages,
        quoteTexts,
        authorsFound: authors.filter(hasFixture),
        authorsMissing: authors.filter((path) => !hasFixture(path)),
    };
}

describe('dragnet CLI: usage errors', { concurrency: true }, () => {
    it('--help exits 0 and lists the flags', async () => {
        const result = await runCli(['--help']);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /^ {2}--start-url\b/m);
        assert.match(result.stdout, /^ {2}--summary-json\b/m);
        assert.equal(result.stderr, '');
    });

    it('an invalid --start-url exits 2 with one line', async (t) => {
        const result = await runCli([
            '--site',
            'quotes-toscrape',
            '--start-url',
            'notaurl',
            '--storage-dir',
            await storageDir(t),
        ]);
        assertConfigError(result, /--start-url.*notaurl/);
    });

    it('a start URL no route handles exits 2 with one line', async (t) => {
        const result = await runCli([
            '--site',
            'quotes-toscrape',
            '--start-url',
            'http://127.0.0.1:9/login',
            '--storage-dir',
            await storageDir(t),
        ]);
        assertConfigError(result, /no route of site quotes-toscrape matches/);
    });

    it('an unknown --site exits 2 with one line naming the sites there are', async (t) => {
        const result = await runCli(['--site', 'nosuchsite', '--storage-dir', await storageDir(t)]);
        assertConfigError(result, /unknown site "nosuchsite"/);
        const sites = readdirSync(join(ROOT, 'routes'))
            .filter((file) => file.endsWith('.ts'))
            .map((file) => file.replace(/\.ts$/, ''));
        assert.ok(sites.length >= 3);
        for (const site of sites) assert.ok(result.stderr.includes(site), `names ${site}: ${result.stderr}`);
    });

    it('a bad --max-concurrency exits 2 with one line naming the flag', async (t) => {
        const result = await runCli(['--max-concurrency', 'abc', '--storage-dir', await storageDir(t)]);
        assertConfigError(result, /--max-concurrency/);
    });

    it('an unknown flag exits 2 with one line', async () => {
        assertConfigError(await runCli(['--max-concurency', '4']), /--max-concurency.*--help/);
    });

    it('a --storage-dir, --archive-dir or --summary-json folder that is a file exits 2 with one line', async (t) => {
        const file = join(await storageDir(t), 'a-file');
        await writeFile(file, '');
        const site = ['--site', 'quotes-toscrape', '--start-url', 'http://127.0.0.1:9/'];
        const [storage, archive, summary] = await Promise.all([
            runCli([...site, '--storage-dir', file]),
            runCli([...site, '--storage-dir', await storageDir(t), '--archive-dir', file]),
            runCli([...site, '--storage-dir', await storageDir(t), '--summary-json', join(file, 'summary.json')]),
        ]);
        assertConfigError(
            archive,
            /the archive dir .*a-file cannot hold the site's archive: E(EXIST|NOTDIR) \(see --archive-dir\)/,
        );
        assertConfigError(
            storage,
            /the storage dir .*a-file cannot hold the run's database \(dragnet\.sqlite\): EEXIST \(see --storage-dir\)/,
        );
        assertConfigError(
            summary,
            /--summary-json .*a-file\/summary\.json: its folder cannot be made: E(EXIST|NOTDIR)/,
        );
    });
});

describe('dragnet CLI: crawling the saved quotes.toscrape.com', () => {
    let server: StaticSite;
    before(async () => {
        server = await startStaticSite(FIXTURES);
    });
    after(() => server.close());

    /** Runs a crawl of the quotes site; returns the result, the summary file and the stores. */
    async function crawl(t: TestContext, startPath: string, args: string[] = []) {
        const storage = await storageDir(t);
        const summaryFile = join(storage, 'out', 'summary.json');
        const result = await runCli([
            '--site',
            'quotes-toscrape',
            '--start-url',
            `${server.url}${startPath}`,
            '--storage-dir',
            storage,
            '--summary-json',
            summaryFile,
            '--max-concurrency',
            '4',
            ...args,
        ]);
        assert.equal(result.code, 0, `exit code (signal ${result.signal}); stderr:\n${result.stderr}`);
        const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as Summary;
        return {
            result,
            summary,
            items: await readDataset(storage, 'quotes-toscrape'),
            deadLetter: await readDataset(storage, 'quotes-toscrape-dead-letter'),
        };
    }

    // Parsed in the crawling thread, and in two parse workers: the same crawl either way.
    for (const parseWorkers of ['0', '2'])
        it(`stores every quote and author page there is, and \
dead-letters the 404s (--parse-workers ${parseWorkers})`, async (t) => {
            const expected = expectedCrawl('/');
            // The fixtures as MANIFEST.md describes them; the rest of the test follows whatever they hold.
            assert.equal(expected.listPages.length, 6);
            assert.equal(expected.quoteTexts.length, 60);
            assert.deepEqual(expected.authorsFound, [
                '/author/Albert-Einstein',
                '/author/J-K-Rowling',
                '/author/Jane-Austen',
            ]);

            const archiveDir = join(await storageDir(t), 'archive-elsewhere');
            const { result, summary, items, deadLetter } = await crawl(t, '/', [
                '--parse-workers',
                parseWorkers,
                '--archive-dir',
                archiveDir,
            ]);
            assert.deepEqual(
                (await readdir(join(archiveDir, 'quotes-toscrape'))).sort(),
                ['dragnet-000001.cdxj', 'dragnet-000001.warc.gz'],
                'the raw pages archived where --archive-dir says',
            );
            assertSummaryShape(summary);
            const storedQuotes = expected.quoteTexts.length;
            const storedAuthors = expected.authorsFound.length;
            assert.equal(summary.items.stored, storedQuotes + storedAuthors);
            assert.equal(summary.items.invalid, 0);
            assert.equal(summary.http.fetched, expected.listPages.length + storedAuthors);
            assert.equal(summary.browser.rendered, 0);
            assert.equal(summary.requests.deadLettered, expected.missingPages.length + expected.authorsMissing.length);
            assert.equal(summary.requests.retried, 0);
            assert.equal(summary.requests.succeeded + summary.requests.deadLettered, summary.requests.total);

            assert.equal(items.length, summary.items.stored);
            assert.deepEqual(
                items
                    .filter((item) => item._route === 'quotes')
                    .map((item) => item.text)
                    .sort(),
                [...expected.quoteTexts].sort(),
            );
            assert.deepEqual(
                items
                    .filter((item) => item._route === 'author')
                    .map((item) => item.name)
                    .sort(),
                ['Albert Einstein', 'J.K. Rowling', 'Jane Austen'],
            );

            const expectedDead = [...expected.missingPages, ...expected.authorsMissing].map(
                (path) => `${server.url}${path}`,
            );
            assert.deepEqual(deadLetter.map((entry) => entry.url).sort(), expectedDead.sort());
            for (const entry of deadLetter) {
                assert.equal(entry.reason, 'http-404', String(entry.url));
                assert.equal(entry.failureClass, 'permanent');
                assert.equal(entry.status, 404);
                assert.equal(entry.attempts, 1, 'a 404 is not retried');
            }

            assert.match(result.stdout, /^dragnet: quotes-toscrape finished in /m);
            assert.match(result.stdout, new RegExp(`items +${summary.items.stored} stored, 0 quarantined`));
            assert.ok(!result.stderr.includes('    at '), `no stack traces on stderr:\n${result.stderr}`);
        });

    it('renders the JavaScript pages in the browser and stores their quotes', async (t) => {
        const expected = expectedCrawl('/js/');
        assert.equal(expected.listPages.length, 6);
        assert.equal(expected.quoteTexts.length, 60);
        assert.deepEqual(expected.authorsFound, [], 'the JS pages link no authors');

        const { summary, items, deadLetter } = await crawl(t, '/js/');
        assertSummaryShape(summary);
        assert.equal(summary.browser.rendered, expected.listPages.length);
        assert.equal(summary.http.fetched, expected.listPages.length, 'each page is tried the cheap way first');
        assert.equal(summary.items.stored, expected.quoteTexts.length);
        assert.equal(summary.items.invalid, 0);
        assert.equal(summary.requests.deadLettered, expected.missingPages.length);

        assert.deepEqual(items.map((item) => item.text).sort(), [...expected.quoteTexts].sort());
        assert.ok(
            items.every((item) => item._renderer === 'browser'),
            'every quote came from the rendered page',
        );
        assert.deepEqual(
            deadLetter.map((entry) => [entry.url, entry.reason]),
            expected.missingPages.map((path) => [`${server.url}${path}`, 'http-404']),
        );
    });
});

/** The summary JSON contract (DESIGN.md: command line and outputs). */
interface Summary {
    site: string;
    startedAt: string;
    finishedAt: string;
    durationSec: number;
    pagesPerSec: number;
    requests: { total: number; succeeded: number; retried: number; deadLettered: number };
    http: { fetched: number };
    browser: { rendered: number };
    items: { stored: number; invalid: number };
}

function assertSummaryShape(summary: Summary): void {
    assert.equal(summary.site, 'quotes-toscrape');
    const started = Date.parse(summary.startedAt);
    const finished = Date.parse(summary.finishedAt);
    assert.ok(
        Number.isFinite(started) && Number.isFinite(finished) && started <= finished,
        `${summary.startedAt} .. ${summary.finishedAt}`,
    );
    assert.equal(typeof summary.durationSec, 'number');
    assert.ok(summary.durationSec > 0);
    assert.ok(Math.abs(summary.durationSec - (finished - started) / 1000) < 0.1, 'durationSec matches the timestamps');
    assert.ok(summary.pagesPerSec > 0);
    for (const [group, fields] of [
        ['requests', ['total', 'succeeded', 'retried', 'deadLettered']],
        ['http', ['fetched']],
        ['browser', ['rendered']],
        ['items', ['stored', 'invalid']],
    ] as const) {
        for (const field of fields) {
            const value = (summary[group] as Record<string, unknown>)[field];
            assert.ok(Number.isInteger(value) && (value as number) >= 0, `${group}.${field} = ${String(value)}`);
        }
    }
}
