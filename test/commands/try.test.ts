/**
 * `npm run try` against the fixture shop: one page, fetched as a run fetches it, through its route —
 * records and per-field verdicts, escalation, links by fate, the browser beside the cheap fetch, a
 * saved page, a page that fails — and the site's own stores never touched.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Shop, startShop } from '../../src/demo/shop.js';
import type { PageTrial } from '../../src/authoring/pageTrial.js';
import { assertOneLineError, runScript } from '../helpers/cli.js';
import { startProxyWorld } from '../helpers/proxyWorld.js';

const TRY = 'src/commands/try.ts';

describe('npm run try', () => {
    let shop: Shop;
    let dir: string;
    const tryPage = (...args: string[]) =>
        runScript(TRY, [
            '--site',
            'demo-shop',
            '--allow-private-network',
            '--storage-dir',
            join(dir, 'storage'),
            ...args,
        ]);

    before(async () => {
        shop = await startShop({ seed: 11, products: 60, scriptOnlyRate: 0.2, notFoundLinks: 1 });
        dir = await mkdtemp(join(tmpdir(), 'dragnet-try-test-'));
    });
    after(async () => {
        await shop.close();
        await rm(dir, { recursive: true, force: true });
    });

    it('shows a script-only product missing its title and price, and that a run sends it to the browser', async () => {
        const product = shop.products.find((each) => each.scriptOnly)!;
        const run = await tryPage('--url', `${shop.url}${product.path}`);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /✗ title +\(missing\) +title: /);
        assert.match(run.stdout, /✓ sku +"SKU-/);
        assert.match(
            run.stdout,
            /incomplete \(missing or invalid: title, price\): a run sends this page to the browser/,
        );
        assert.ok(!existsSync(join(dir, 'storage')), 'the storage dir is not created');
    });

    it('--json: the records as the dataset stores them, and each link with its label and fate', async () => {
        const product = shop.products.find((each) => !each.scriptOnly)!;
        const run = await tryPage('--url', `${shop.url}${product.path}?utm_source=x`, '--json');
        assert.equal(run.code, 0, run.stderr);
        const { trials } = JSON.parse(run.stdout) as { trials: PageTrial[] };
        assert.equal(trials.length, 1);
        const [trial] = trials;
        assert.equal(trial!.url, `${shop.url}${product.path}`, 'tracking parameters dropped');
        assert.deepEqual(
            trial!.records.map((record) => [record.title, record.price, record.sku]),
            [[product.title, product.price, product.sku]],
        );
        assert.equal(trial!.escalates, false);
        assert.ok(trial!.links.length > 0);
        for (const link of trial!.links) assert.equal(link.label, 'product');
        assert.ok(
            trial!.links.every((link) => link.fate === 'follow' || link.fate === 'duplicate'),
            JSON.stringify(trial!.links),
        );
    });

    it('--label routes a URL as the label says; a listing shows its links by rule, off-site ones marked', async () => {
        const listing = `${shop.url}${shop.listingPaths[0]}`;
        const page = await (await fetch(listing)).text();
        const file = join(dir, 'listing.html');
        await writeFile(
            file,
            page.replace('</body>', '<a class="product-link" href="https://elsewhere.example/products/x">x</a></body>'),
        );
        const run = await tryPage('--file', file, '--url', listing, '--label', 'category', '--json');
        assert.equal(run.code, 0, run.stderr);
        const [trial] = (JSON.parse(run.stdout) as { trials: PageTrial[] }).trials;
        assert.equal(trial!.label, 'category');
        assert.deepEqual(
            trial!.links.filter((link) => link.fate === 'offsite').map((link) => link.url),
            ['https://elsewhere.example/products/x'],
        );
        assert.ok(trial!.links.some((link) => link.label === 'product' && link.fate === 'follow'));
    });

    it('--render renders the page too and shows the two side by side', async () => {
        const product = shop.products.find((each) => each.scriptOnly)!;
        const run = await tryPage('--url', `${shop.url}${product.path}`, '--render');
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /^browser: .* → route product/m);
        assert.match(run.stdout, /side by side/);
        assert.ok(run.stdout.includes(`≠ title`), run.stdout);
        assert.ok(run.stdout.includes(`✓ ${JSON.stringify(product.title)}`), run.stdout);
    });

    it('goes out as a run would: through the proxy tier it is given', async () => {
        const proxies = await startProxyWorld({ datacenter: 1, residential: 0, broken: 0 });
        try {
            const product = shop.products.find((each) => !each.scriptOnly)!;
            const run = await tryPage(
                '--url',
                `${shop.url}${product.path}`,
                '--proxy-tier',
                `datacenter=${proxies.tiers[0]!.proxyUrls[0]}`,
            );
            assert.equal(run.code, 0, run.stderr);
            assert.match(run.stdout, /complete: a run stores the records/);
            assert.ok(proxies.stats()[0]!.requests >= 1, JSON.stringify(proxies.stats()));
            for (const secret of proxies.secrets)
                assert.ok(!`${run.stdout}${run.stderr}`.includes(secret), 'no proxy password printed');
        } finally {
            await proxies.close();
        }
    });

    it('--save-fixture keeps the page and what it gives in the fixtures dir', async () => {
        const product = shop.products.find((each) => !each.scriptOnly)!;
        const fixtures = join(dir, 'fixtures');
        const run = await tryPage('--url', `${shop.url}${product.path}`, '--save-fixture', '--fixtures-dir', fixtures);
        assert.equal(run.code, 0, run.stderr);
        const name = product.path.split('/').filter(Boolean).join('-');
        const expected = JSON.parse(await readFile(join(fixtures, `${name}.expected.json`), 'utf8'));
        assert.equal(expected.label, 'product');
        assert.equal(expected.records[0].sku, product.sku);
        assert.match(await readFile(join(fixtures, `${name}.html`), 'utf8'), new RegExp(product.sku));
    });

    it('a page that fails says why and exits 1; a bad label, URL or file is a one-line error', async () => {
        const missing = await tryPage('--url', `${shop.url}${shop.notFoundPaths[0]}`, '--max-attempts', '1');
        assert.equal(missing.code, 1);
        assert.match(missing.stdout, /cheap fetch: dead-lettered as http-404/);
        assertOneLineError(
            await tryPage('--url', `${shop.url}/`, '--label', 'nope'),
            2,
            /--label nope: site demo-shop has no such route \(routes: home, category, product\)/,
        );
        assertOneLineError(await tryPage('--url', 'mailto:someone@example.com'), 2, /--url: invalid URL/);
        assertOneLineError(await tryPage(), 2, /give the page: --url URL, or --file PAGE\.html/);
        assertOneLineError(
            await tryPage('--file', '/nonexistent/page.html'),
            2,
            /cannot read --file \/nonexistent\/page\.html: ENOENT/,
        );
    });
});
