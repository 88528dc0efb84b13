/**
 * One DevTools (CDP) session per browser page, opened on first use and kept while the page lives:
 * the browser stage sets a page's identity up through it, reads rendered documents through it
 * (renderedPage.ts) and has a parked page's renderer collect its garbage (sessionPages.ts).
 */
import type { CDPSession, Page } from 'playwright';

const sessions = new WeakMap<Page, Promise<CDPSession>>();

/** The page's session; a page that could not be attached (closed meanwhile) is tried again next time. */
export function devtoolsOf(page: Page): Promise<CDPSession> {
    let session = sessions.get(page);
    if (!session) {
        session = page.context().newCDPSession(page);
        sessions.set(page, session);
        session.catch(() => sessions.delete(page));
    }
    return session;
}
