/**
 * The `chrome` wire profile: requests sent by the network stack of the Chromium on the machine, so
 * the TLS handshake (GREASE, an extension order new per connection), HTTP/2's SETTINGS, window
 * update and priorities, and the header set and its order are the browser's by construction, not an
 * imitation that drifts with each release. Each request is a top-level navigation of a tab, paused
 * once its response's headers are in (CDP's Fetch domain, response stage); its body is read from
 * there as a stream, then the navigation is aborted: nothing is parsed, rendered or run.
 *
 * Each session has a browser context of its own: its cookies and connections, its exit through an
 * egress proxy as the browser stage's pages have (egressProxy.ts: every address checked, the TLS
 * end to end through the tunnel, so the handshake the site sees is Chromium's), and tabs that claim
 * its user agent and client hints. Chromium keeps the cookies responses set; the session's jar
 * (kept by the stage from the same responses) is handed to the context before a request when it
 * holds any, so what the HTTP stage or the browser stage learned is sent here too.
 *
 * Certificates are not verified (`--ignore-certificate-errors`), the policy of every stage. The
 * body comes decoded (Chromium decodes it), so its `content-encoding` is dropped; its declared
 * `content-length` stays, as on `fast`, and the size cap counts the decoded bytes as they are
 * read, which pulls them from Chromium no faster than they are counted.
 */
import type { Protocol } from 'devtools-protocol';
import { CHROMIUM_ARGS } from '../browser/chromium.js';
import type { Egress } from '../egress/egress.js';
import { type EgressProxy, startEgressProxy } from '../egress/egressProxy.js';
import { type Exit, exitKey, type Identity } from '../egress/identities.js';
import { cookiesForBrowser, SessionCookieStore } from '../egress/sessionCookies.js';
import type { ClientRequest, ClientResponse } from '../http/httpClient.js';
import { DevtoolsPipe } from './devtoolsPipe.js';
import { navigate, type Tab } from './navigation.js';

export interface ChromeWireOptions {
    /** The Chromium binary (see `findChromium`). */
    executablePath: string;
    /** Where requests may connect: each context's egress proxy asks it. */
    egress: Egress;
    /**
     * Idle tabs kept, over every session, for the next requests: a tab opened costs Chromium a
     * renderer process, one reused costs nothing. Past it a finished tab is closed. Default: 64.
     */
    maxIdleTabs?: number;
    /** Sessions whose browser context stays open; past it the least recently used idle one is closed. Default: 64. */
    maxContexts?: number;
}

export const CHROME_WIRE_DEFAULTS = { maxIdleTabs: 64, maxContexts: 64 };

/**
 * The flags of the fetching Chromium, beyond the browser stage's (chromium.ts). Its language is the
 * identities' (`en-US,en;q=0.9`): an accept-language given with the user agent override would be
 * sent as an extra header, out of Chrome's order.
 */
const WIRE_ARGS = [
    '--ignore-certificate-errors',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--lang=en-US',
];

interface SessionContext {
    id: string;
    identity: Identity;
    idle: Tab[];
    busy: number;
    lastUsed: number;
}

export type ChromeRequest = ClientRequest & { identity: Identity };

export class ChromeWire {
    private readonly executablePath: string;
    private readonly egress: Egress;
    private readonly maxIdleTabs: number;
    private idleTabs = 0;
    private readonly maxContexts: number;
    private browser?: Promise<DevtoolsPipe>;
    private readonly contexts = new Map<string, Promise<SessionContext>>();
    private readonly exitProxies = new Map<string, Promise<EgressProxy>>();

    constructor(options: ChromeWireOptions) {
        this.executablePath = options.executablePath;
        this.egress = options.egress;
        this.maxIdleTabs = options.maxIdleTabs ?? CHROME_WIRE_DEFAULTS.maxIdleTabs;
        this.maxContexts = options.maxContexts ?? CHROME_WIRE_DEFAULTS.maxContexts;
    }

    /** Sends the request; resolves once the response's headers are in, its body left to read. */
    async fetch(request: ChromeRequest): Promise<ClientResponse> {
        const url = typeof request.url === 'string' ? new URL(request.url) : request.url;
        const method = request.method ?? 'GET';
        if (method !== 'GET') throw new Error(`the chrome wire profile sends GET requests only, not ${method}`);
        // Refused before Chromium asks (its egress proxy would refuse it too, but Chromium would report only a failed tunnel).
        await this.egress.check(url);
        const browser = await this.launched();
        const context = await this.contextOf(browser, request.identity);
        context.busy += 1;
        context.lastUsed = Date.now();
        let tab: Tab | undefined;
        let settle: () => void = () => undefined;
        try {
            tab = this.takeIdleTab(context) ?? (await this.openTab(browser, context));
            await this.prepare(browser, context, tab, url, request.headers);
            // The timeout is the site's: it starts once the tab is ready, as the fast profile's starts at the request
            // (opening a context and a tab can take Chromium most of a second on a busy machine).
            const limit = deadline(request.timeoutMs, request.signal);
            settle = limit.settle;
            const start = performance.now();
            const exchange = await navigate(browser, tab, url, limit.signal, request.timeoutMs, exitIsProxy(context));
            exchange.body.once('close', settle);
            const response = exchange.body as ClientResponse;
            response.statusCode = exchange.status;
            response.headers = exchange.headers;
            response.url = url.href;
            response.timings = { start, response: performance.now() };
            const usedTab = tab;
            tab = undefined;
            void exchange.done.then((reusable) => this.release(browser, context, usedTab, reusable));
            return response;
        } catch (error) {
            settle();
            if (tab) void this.release(browser, context, tab, false);
            else context.busy -= 1;
            throw error;
        }
    }

    /** Closes the browser and the egress proxies; requests in flight fail. */
    async close(): Promise<void> {
        const browser = await this.browser?.catch(() => undefined);
        this.forgetBrowser();
        await browser?.close();
        const proxies = await Promise.allSettled([...this.exitProxies.values()]);
        this.exitProxies.clear();
        await Promise.all(proxies.map((proxy) => (proxy.status === 'fulfilled' ? proxy.value.close() : undefined)));
    }

    /** The browser, launched on first use and again after it died. */
    private launched(): Promise<DevtoolsPipe> {
        const current = this.browser;
        if (current) {
            return current.then((browser) => {
                if (!browser.closed) return browser;
                if (this.browser === current) this.forgetBrowser();
                return this.launched();
            });
        }
        const launching = this.startBrowser();
        this.browser = launching;
        launching.catch(() => {
            if (this.browser === launching) this.forgetBrowser();
        });
        return launching;
    }

    private async startBrowser(): Promise<DevtoolsPipe> {
        const direct = await this.exitProxy(undefined);
        return DevtoolsPipe.launch(this.executablePath, [
            ...CHROMIUM_ARGS,
            ...WIRE_ARGS,
            `--proxy-server=${direct.url}`,
            '--proxy-bypass-list=<-loopback>',
        ]);
    }

    private forgetBrowser(): void {
        this.browser = undefined;
        this.contexts.clear();
        this.idleTabs = 0;
    }

    private exitProxy(exit: Exit | undefined): Promise<EgressProxy> {
        const key = exit?.proxyUrl ? exitKey(exit) : 'direct';
        let proxy = this.exitProxies.get(key);
        if (!proxy) {
            proxy = startEgressProxy(this.egress, exit?.proxyUrl);
            this.exitProxies.set(key, proxy);
        }
        return proxy;
    }

    private contextOf(browser: DevtoolsPipe, identity: Identity): Promise<SessionContext> {
        let context = this.contexts.get(identity.id);
        if (!context) {
            context = this.openContext(browser, identity);
            this.contexts.set(identity.id, context);
            context.catch(() => this.contexts.delete(identity.id));
        }
        return context;
    }

    private async openContext(browser: DevtoolsPipe, identity: Identity): Promise<SessionContext> {
        await this.closeSpareContexts(browser);
        const proxy = await this.exitProxy(identity.exit);
        const { browserContextId } = await browser.send('Target.createBrowserContext', {
            proxyServer: proxy.url,
            proxyBypassList: '<-loopback>',
        });
        return { id: browserContextId, identity, idle: [], busy: 0, lastUsed: Date.now() };
    }

    /** Closes the contexts of retired sessions, and the least recently used idle ones past `maxContexts`. */
    private async closeSpareContexts(browser: DevtoolsPipe): Promise<void> {
        const settled = await Promise.all([...this.contexts.values()].map((context) => context.catch(() => undefined)));
        const idle = settled
            .filter((context): context is SessionContext => context !== undefined && context.busy === 0)
            .sort((a, b) => a.lastUsed - b.lastUsed);
        const spare = idle.length - Math.max(0, this.maxContexts - 1 - (settled.length - idle.length));
        for (const [index, context] of idle.entries())
            if (context.identity.retiredFor || index < spare) await this.closeContext(browser, context);
    }

    private takeIdleTab(context: SessionContext): Tab | undefined {
        const tab = context.idle.pop();
        if (tab) this.idleTabs -= 1;
        return tab;
    }

    private async closeContext(browser: DevtoolsPipe, context: SessionContext): Promise<void> {
        this.contexts.delete(context.identity.id);
        this.idleTabs -= context.idle.length;
        context.idle = [];
        await browser.send('Target.disposeBrowserContext', { browserContextId: context.id }).catch(() => undefined);
    }

    private async openTab(browser: DevtoolsPipe, context: SessionContext): Promise<Tab> {
        const { targetId } = await browser.send('Target.createTarget', {
            url: 'about:blank',
            browserContextId: context.id,
        });
        const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
        await Promise.all([
            browser.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Response' }] }, sessionId),
            browser.send('Emulation.setUserAgentOverride', userAgentOnly(context.identity), sessionId),
        ]);
        return { sessionId, targetId };
    }

    /** The session's cookies and the site's own headers, where there are any, on the tab before it navigates. */
    private async prepare(
        browser: DevtoolsPipe,
        context: SessionContext,
        tab: Tab,
        url: URL,
        headers: ClientRequest['headers'],
    ): Promise<void> {
        const { identity } = context;
        const jar = identity.cookieJar;
        if (!(jar.store instanceof SessionCookieStore) || jar.store.everGiven) {
            const cookies = await cookiesForBrowser(jar, url);
            if (cookies.length > 0)
                await browser.send('Storage.setCookies', {
                    browserContextId: context.id,
                    cookies: cookies.map(({ name, value, domain, path, httpOnly, secure, sameSite, expires }) => ({
                        name,
                        value,
                        domain,
                        path,
                        httpOnly,
                        secure,
                        sameSite,
                        // A session cookie (-1) is given no expiry.
                        ...(expires > 0 ? { expires } : {}),
                    })),
                });
        }
        const extra = Object.fromEntries(
            Object.entries(headers ?? {}).filter(
                ([name, value]) =>
                    value !== undefined &&
                    !SENT_BY_CHROMIUM.has(name.toLowerCase()) &&
                    !(name.toLowerCase() in identity.headers),
            ),
        );
        const extraJson = Object.keys(extra).length > 0 ? JSON.stringify(extra) : undefined;
        if (extraJson === tab.extraHeaders) return;
        if (tab.extraHeaders === undefined) await browser.send('Network.enable', {}, tab.sessionId);
        await browser.send(
            'Network.setExtraHTTPHeaders',
            { headers: extra as Protocol.Network.Headers },
            tab.sessionId,
        );
        tab.extraHeaders = extraJson;
    }

    /** A tab that finished its exchange cleanly waits for the session's next request; any other is closed. */
    private async release(browser: DevtoolsPipe, context: SessionContext, tab: Tab, reusable: boolean): Promise<void> {
        context.busy -= 1;
        context.lastUsed = Date.now();
        const keep = reusable && !browser.closed && !context.identity.retiredFor;
        if (keep && this.idleTabs < this.maxIdleTabs) {
            context.idle.push(tab);
            this.idleTabs += 1;
            return;
        }
        await browser.send('Target.closeTarget', { targetId: tab.targetId }).catch(() => undefined);
        if (context.identity.retiredFor && context.busy === 0) await this.closeContext(browser, context);
    }
}

/**
 * A signal that aborts `timeoutMs` from now, or with `external`, and `settle` to stop both once the exchange is
 * over. Not `AbortSignal.any([AbortSignal.timeout(…)])`: Node holds a timeout signal only weakly, so once the
 * composite alone refers to it a garbage collection takes it and its abort never comes; a body that trickles
 * would then be read until the stage's own handler timeout, and a robots.txt or sitemap fetch forever.
 */
function deadline(timeoutMs: number, external?: AbortSignal): { signal: AbortSignal; settle: () => void } {
    const controller = new AbortController();
    const timer = setTimeout(
        () => controller.abort(new DOMException('the request timed out', 'TimeoutError')),
        timeoutMs,
    );
    const forward = () => controller.abort(external?.reason);
    external?.addEventListener('abort', forward, { once: true });
    if (external?.aborted) forward();
    return {
        signal: controller.signal,
        settle: () => {
            clearTimeout(timer);
            external?.removeEventListener('abort', forward);
        },
    };
}

/** The identity's user agent and client hints, without its accept-language (see WIRE_ARGS). */
function userAgentOnly(identity: Identity): Protocol.Emulation.SetUserAgentOverrideRequest {
    const { acceptLanguage: _, ...override } = identity.userAgentOverride();
    return override;
}

/** Headers Chromium writes itself (the cookie from the context's store): never set as extra headers. */
const SENT_BY_CHROMIUM = new Set(['cookie', 'host', 'connection', 'content-length']);

function exitIsProxy(context: SessionContext): boolean {
    return context.identity.exit.proxyUrl !== undefined;
}
