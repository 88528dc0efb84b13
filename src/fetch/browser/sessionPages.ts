/**
 * Pages kept open between renders, per session. Each browser page lives in a context of its own
 * (Crawlee's incognito pages) made with one session's identity: its exit, user agent, client
 * hints and cookies. Opening that context and page, setting its identity up and closing it again
 * took ~290 of a render's ~490 ms (issue 21's profile); a page that rendered one page of a session
 * is therefore parked and handed back for that session's next render, which only navigates it.
 * A page is only ever reused by the session it was opened for, so identities never mix.
 *
 * A reused page's renderer keeps what the pages before it left: over 50 renders of the fixture
 * shop one grew from ~50 to ~90 MB of PSS, garbage its V8 and Blink heaps had not collected yet
 * (a forced collection brought it back to ~45 MB). So every few renders a parked page's renderer
 * collects its garbage, while the page waits for its session's next render.
 *
 * A parked page still counts as open in the browser pool; the stage asks `makeRoom` before it
 * opens a new one, so parked pages never push the pool into launching another browser.
 */
import type { Page } from 'playwright';
import { devtoolsOf } from './pageDevtools.js';

export interface SessionPagesOptions {
    /** Renders one page serves before it is closed, so what a long-lived page leaks stays bounded. Default: 50. */
    maxUsesPerPage?: number;
    /** A page parked this long without being taken is closed. Default: 30 s. */
    idleMillis?: number;
    /**
     * Every this many renders, a parked page's renderer collects its garbage (CDP
     * `HeapProfiler.collectGarbage`, ~10-40 ms of the renderer's time). Default: 5.
     */
    collectGarbageEvery?: number;
}

export const SESSION_PAGES_DEFAULTS = { maxUsesPerPage: 50, idleMillis: 30_000, collectGarbageEvery: 5 };

interface Parked {
    sessionId: string;
    page: Page;
    idleTimer: NodeJS.Timeout;
}

export class SessionPages {
    private readonly maxUsesPerPage: number;
    private readonly idleMillis: number;
    private readonly collectGarbageEvery: number;
    /** Oldest first. */
    private parked: Parked[] = [];
    private readonly uses = new WeakMap<Page, number>();
    private readonly closing = new Set<Promise<void>>();

    constructor(options: SessionPagesOptions = {}) {
        this.maxUsesPerPage = options.maxUsesPerPage ?? SESSION_PAGES_DEFAULTS.maxUsesPerPage;
        this.idleMillis = options.idleMillis ?? SESSION_PAGES_DEFAULTS.idleMillis;
        this.collectGarbageEvery = options.collectGarbageEvery ?? SESSION_PAGES_DEFAULTS.collectGarbageEvery;
    }

    /** Pages parked now. */
    get size(): number {
        return this.parked.length;
    }

    /** Whether a page is parked for the session. */
    holds(sessionId: string): boolean {
        return this.parked.some((entry) => entry.sessionId === sessionId);
    }

    /**
     * The session's most recently parked page that `usable` accepts (its browser not retired, say);
     * those it refuses are closed. Undefined when the session has none.
     */
    take(sessionId: string, usable: (page: Page) => boolean): Page | undefined {
        for (let index = this.parked.length - 1; index >= 0; index--) {
            const entry = this.parked[index];
            if (entry?.sessionId !== sessionId) continue;
            this.unpark(entry);
            if (!entry.page.isClosed() && usable(entry.page)) return entry.page;
            this.close(entry.page);
        }
        return undefined;
    }

    /** Parks a page that rendered for the session, or closes it once it has served its uses. */
    park(sessionId: string, page: Page): void {
        const uses = (this.uses.get(page) ?? 0) + 1;
        this.uses.set(page, uses);
        if (uses >= this.maxUsesPerPage || page.isClosed()) {
            this.close(page);
            return;
        }
        const entry: Parked = {
            sessionId,
            page,
            idleTimer: setTimeout(() => this.drop(entry), this.idleMillis).unref(),
        };
        this.parked.push(entry);
        if (uses % this.collectGarbageEvery === 0) void this.collectGarbage(page);
    }

    /**
     * Closes parked pages, oldest first, until at most `keep` are left, and waits until every page
     * being closed is: the browser pool counts a page as open until it has closed.
     */
    async makeRoom(keep: number): Promise<void> {
        while (this.parked.length > Math.max(0, keep)) {
            const oldest = this.parked[0];
            if (!oldest) break;
            this.drop(oldest);
        }
        await Promise.all([...this.closing]);
    }

    /** Closes every parked page. */
    async closeAll(): Promise<void> {
        await this.makeRoom(0);
    }

    private async collectGarbage(page: Page): Promise<void> {
        try {
            await (await devtoolsOf(page)).send('HeapProfiler.collectGarbage');
        } catch {
            // closed meanwhile: its renderer's memory went with it
        }
    }

    private drop(entry: Parked): void {
        this.unpark(entry);
        this.close(entry.page);
    }

    private unpark(entry: Parked): void {
        clearTimeout(entry.idleTimer);
        this.parked = this.parked.filter((other) => other !== entry);
    }

    /**
     * Closing a page closes its context too (Crawlee's incognito pages own theirs); a page already gone is no error.
     */
    private close(page: Page): void {
        const closing = page.close().catch(() => undefined);
        this.closing.add(closing);
        void closing.finally(() => this.closing.delete(closing));
    }
}
