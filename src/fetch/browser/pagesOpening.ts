/**
 * The pages a browser pool is opening, so that a stage torn down mid-launch closes the browser that
 * comes up after. Crawlee's `BrowserPool.destroy()` (3.18) closes the browsers it has, not one still
 * launching: that browser comes up once the pool is gone, with nothing left to close it, and keeps
 * the process alive. A crawl that failed is torn down with its other attempts still running, and
 * one of them may be waiting for a browser to launch.
 *
 *     const page = await opening.track(() => pool.newPage());
 *     // teardown
 *     const closed = opening.closeBrowsers();
 *     await pool.destroy();
 *     await closed;
 */
import type { Page } from 'playwright';

export class PagesOpening {
    private readonly pending = new Set<Promise<Page>>();
    private closing = false;

    /** Opens a page with `open`, followed until it is open; refused once `closeBrowsers()` was called. */
    track(open: () => Promise<Page>): Promise<Page> {
        if (this.closing) return Promise.reject(new Error('the browser stage is closing: no page is opened'));
        const opened = open();
        this.pending.add(opened);
        return opened.finally(() => this.pending.delete(opened));
    }

    /**
     * Refuses new pages, and closes the browser of each page being opened now, once it is open.
     * Closing a browser the pool closed as well does no harm.
     */
    async closeBrowsers(): Promise<void> {
        this.closing = true;
        const pages = [...this.pending];
        await Promise.all(
            pages.map((opened) =>
                opened.then(
                    (page) => page.context().browser()?.close(),
                    () => undefined,
                ),
            ),
        );
    }
}
