import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { chromium, type Browser, type Page } from 'playwright';

import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { SessionPages } from '../../../src/fetch/browser/sessionPages.js';
import { startShop } from '../../../src/demo/shop.js';

const executablePath = findChromium();

describe('SessionPages with Chromium', { skip: executablePath ? false : 'no Chromium found' }, () => {
    let browser: Browser;
    const always = () => true;
    /** A page in a context of its own, as the browser stage's incognito pages are. */
    const open = () => browser.newPage();

    before(async () => {
        browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
    });
    after(() => browser?.close());

    it('hands a parked page back to its own session only, most recently parked first', async () => {
        const pages = new SessionPages();
        const [first, second, other] = [await open(), await open(), await open()];
        assert.equal(pages.take('a', always), undefined, 'nothing parked yet');
        pages.park('a', first);
        pages.park('a', second);
        pages.park('b', other);
        assert.equal(pages.size, 3);
        assert.ok(pages.holds('a') && pages.holds('b') && !pages.holds('c'));
        assert.equal(pages.take('c', always), undefined, 'another session gets none of them');
        assert.equal(pages.take('a', always), second);
        assert.equal(pages.take('a', always), first);
        assert.equal(pages.take('a', always), undefined);
        assert.ok(!first.isClosed() && !second.isClosed(), 'taken pages stay open');
        await pages.closeAll();
        assert.ok(other.isClosed(), 'closeAll closes what is parked');
        await Promise.all([first.close(), second.close()]);
    });

    it('closes a parked page the caller cannot use, and one that has served its uses', async () => {
        const pages = new SessionPages({ maxUsesPerPage: 3 });
        const refused = await open();
        pages.park('a', refused);
        assert.equal(
            pages.take('a', (page) => page !== refused),
            undefined,
        );
        await pages.makeRoom(0);
        assert.ok(refused.isClosed(), 'a page the check refuses is closed, not handed out');

        const page = await open();
        let taken: Page | undefined = page;
        for (let use = 1; use < 3; use++) {
            pages.park('a', taken!);
            taken = pages.take('a', always);
            assert.equal(taken, page, `use ${use + 1} is the same page`);
        }
        pages.park('a', page);
        await pages.makeRoom(pages.size);
        assert.equal(pages.size, 0, 'its third render was its last');
        assert.ok(page.isClosed());
    });

    it('makes room oldest first and waits until the pages it closes are closed', async () => {
        const pages = new SessionPages();
        const parked = [await open(), await open(), await open()];
        for (const [index, page] of parked.entries()) pages.park(`s${index}`, page);
        await pages.makeRoom(1);
        assert.deepEqual(
            parked.map((page) => page.isClosed()),
            [true, true, false],
        );
        assert.ok(pages.holds('s2') && !pages.holds('s0'));
        await pages.closeAll();
        assert.ok(parked[2]!.isClosed());
    });

    it('closes a page left parked past its idle time', async () => {
        const pages = new SessionPages({ idleMillis: 50 });
        const page = await open();
        pages.park('a', page);
        for (let waited = 0; !page.isClosed() && waited < 5000; waited += 50) await sleep(50);
        assert.ok(page.isClosed());
        assert.equal(pages.size, 0);
        assert.equal(pages.take('a', always), undefined);
    });

    it("has a parked page's renderer collect its garbage every few renders", async () => {
        // A renderer navigated from page to page keeps every document it left until its heaps are
        // collected, which an idle page's seldom are: 40 shop pages left 82 documents (16 MB of JS heap).
        const shop = await startShop({ products: 10, scriptOnlyRate: 1 });
        const documents = async (page: Page) => {
            const cdp = await page.context().newCDPSession(page);
            const counters = await cdp.send('Memory.getDOMCounters');
            await cdp.detach();
            return counters.documents;
        };
        const renderAFew = async (page: Page) => {
            for (const product of shop.products.slice(0, 4)) await page.goto(new URL(product.path, shop.url).href);
        };
        try {
            const collecting = new SessionPages({ collectGarbageEvery: 2 });
            const never = new SessionPages({ collectGarbageEvery: 1_000 });
            const [page, control] = [await open(), await open()];
            for (const each of [page, control]) await renderAFew(each);
            const before = { page: await documents(page), control: await documents(control) };
            assert.ok(
                before.page >= 4 && before.control >= 4,
                `the pages left are still held: ${JSON.stringify(before)}`,
            );

            collecting.park('a', page);
            assert.equal(collecting.take('a', always), page);
            collecting.park('a', page); // its second render: its renderer collects now
            never.park('a', control);
            never.park('a', control);
            let after = before.page;
            for (let waited = 0; after >= before.page && waited < 5000; waited += 100) {
                await sleep(100);
                after = await documents(page);
            }
            assert.ok(after <= 2, `collected: ${before.page} -> ${after} documents`);
            const controlAfter = await documents(control);
            assert.ok(
                controlAfter >= 4,
                `the page whose renderer was not asked kept them: ${before.control} -> ${controlAfter}`,
            );
            await Promise.all([collecting.closeAll(), never.closeAll()]);
        } finally {
            await shop.close();
        }
    });
});
