/**
 * Reading a page the browser stage rendered: its document once, a JS challenge's course, and a
 * route's waits (`waitFor`, `waitUntil`), which end as soon as what they wait for holds.
 */
import type { Page, Response } from 'playwright';
import { extractAndValidate, isIncomplete } from '../../quality/validate.js';
import { readDocument } from '../../parse/loadedDocument.js';
import type { PageContext, Route } from '../../site/site.js';
import { devtoolsOf } from './pageDevtools.js';
import { detectBlock } from '../failures/responseCheck.js';

/** How often a JS challenge's page is looked at again. */
const CHALLENGE_POLL_MILLIS = 100;
/** The longest a `waitUntil: 'fields'` page goes without being read again when its DOM does not change. */
const FIELDS_RECHECK_MILLIS = 1000;

/**
 * The page's document as rendered now. A page between two documents (a script navigating it on
 * load) is read once the next one has loaded; one that cannot be read gives the response's body.
 */
export async function renderedHtml(page: Page, response: Response | null | undefined): Promise<string> {
    try {
        return await documentHtml(page);
    } catch {
        await page.waitForLoadState('load').catch(() => undefined);
        return (
            (await documentHtml(page).catch(() => undefined)) ?? (await response?.text().catch(() => undefined)) ?? ''
        );
    }
}

/**
 * The document as Chromium serialises it, doctype included: what `page.content()` gives, but
 * Playwright's `content()` first loads its injected script (~330 KB of JavaScript) into every new
 * document, sent over the protocol and compiled by the renderer on every navigation. Fails when
 * the page moves to another document meanwhile (the node asked for is gone).
 */
async function documentHtml(page: Page): Promise<string> {
    const devtools = await devtoolsOf(page);
    const { root } = await devtools.send('DOM.getDocument', { depth: 0 });
    return (await devtools.send('DOM.getOuterHTML', { nodeId: root.nodeId })).outerHTML;
}

/**
 * Waits for a JS challenge to run its course (the page sets its cookie and loads again); the
 * document it ends on when that is no block any more, undefined when it still is at the deadline.
 */
export async function passChallenge(page: Page, timeoutMillis: number): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMillis;
    while (Date.now() < deadline) {
        await page.waitForLoadState('load', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
        // The page may be between two documents: its content is read again on the next turn.
        const html = await documentHtml(page).catch(() => undefined);
        // The status of the document now shown is not known here (403 alone would read as a block): its signs decide.
        if (html !== undefined && !detectBlock({ status: 200, headers: {}, body: html })) return html;
        await page.waitForTimeout(CHALLENGE_POLL_MILLIS);
    }
    return undefined;
}

/**
 * Waits for what the route says shows its data is there: its `waitFor` selector, then its
 * `waitUntil` condition, and gives back the document as it is then (`html` when it was so from
 * the start). Running out of time is not an error here: the extractor and the schema decide
 * whether the page is usable. `fields` reads the page again each time its DOM changes.
 */
export async function waitForContent(
    page: Page,
    html: string,
    route: Route,
    context: PageContext,
    timeoutMillis: number,
): Promise<string> {
    const deadline = Date.now() + timeoutMillis;
    const remaining = () => Math.max(1, deadline - Date.now());
    if (route.waitFor) await page.waitForSelector(route.waitFor, { timeout: remaining() }).catch(() => undefined);
    if (route.waitUntil === 'networkidle') {
        await page.waitForLoadState('networkidle', { timeout: remaining() }).catch(() => undefined);
    } else if (route.waitUntil === 'fields') {
        let current = route.waitFor ? await renderedHtml(page, undefined) : html;
        while (
            isIncomplete(readDocument(current, undefined, ($) => extractAndValidate(route, $, context))) &&
            Date.now() < deadline
        ) {
            await nextDomChange(page, Math.min(FIELDS_RECHECK_MILLIS, remaining()));
            current = await renderedHtml(page, undefined);
        }
        return current;
    } else if (!route.waitFor) {
        return html;
    }
    return renderedHtml(page, undefined);
}

/**
 * Resolves at the page's next DOM change, or after `timeoutMillis`, or when the page navigates
 * away. The script is a string so that no helper of the TypeScript transpiler ends up in it.
 */
async function nextDomChange(page: Page, timeoutMillis: number): Promise<void> {
    const script = `new Promise((resolve) => {
        const observer = new MutationObserver(() => { observer.disconnect(); clearTimeout(timer); resolve(); });
        const timer = setTimeout(() => { observer.disconnect(); resolve(); }, ${Math.round(timeoutMillis)});
        observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    })`;
    await page.evaluate(script).catch(() => undefined);
}
