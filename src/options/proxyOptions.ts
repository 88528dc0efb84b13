/**
 * The options of the table (options/options.ts) about how requests leave: proxy tiers, sessions, and
 * the politeness that holds across every exit and worker.
 */
import { z } from 'zod';
import { SESSION_DEFAULTS } from '../fetch/egress/identities.js';
import { POLITENESS_DEFAULTS } from '../fetch/pacing/politeness.js';
import { parseTierCost, parseTierSpec } from '../fetch/egress/proxyTiers.js';
import { option } from './optionSpec.js';
import { number, onOff, onOffDefault, oneOf, wholeAtLeast1 } from './optionSchemas.js';
import { WIRE_CHOICES } from '../vocabulary/wire.js';

/** A list whose every entry `parse` reads, its error the option's message. */
const parsedList = <T>(parse: (text: string) => T) =>
    z.array(z.string()).transform((entries, context) => {
        try {
            return entries.map(parse);
        } catch (error) {
            context.addIssue({ code: 'custom', message: (error as Error).message });
            return z.NEVER;
        }
    });

export const PROXY_OPTIONS = {
    proxyTiers: option({
        flag: 'proxy-tier',
        env: 'DRAGNET_PROXY_TIERS',
        group: 'proxies',
        kind: 'list',
        listSeparator: /;/,
        default: [],
        defaultText: "the site's proxyTiers, else direct",
        doc:
            'a tier of proxies, cheapest first: NAME=URL[,URL...] or NAME=direct (repeatable, in order; the ' +
            'variable: name=url,url;name=url)',
        schema: parsedList(parseTierSpec),
    }),
    proxyTierCosts: option({
        flag: 'proxy-tier-cost',
        env: 'DRAGNET_PROXY_TIER_COSTS',
        group: 'proxies',
        kind: 'list',
        default: [],
        defaultText: '10x the tier before',
        doc: 'the relative cost of a request on a tier: NAME=COST (repeatable; the variable: space-separated)',
        schema: parsedList(parseTierCost),
    }),
    wire: option({
        flag: 'wire',
        env: 'DRAGNET_WIRE',
        group: 'proxies',
        defaultText: "the site's wire, else auto",
        doc:
            "how requests look on the wire: fast (Node's client), chrome (the handshake of the Chromium on the " +
            'machine), or auto (fast, a section moving to chrome when fast gets it blocked)',
        schema: oneOf(WIRE_CHOICES).optional(),
    }),
    sessionMaxUses: option({
        flag: 'session-max-uses',
        env: 'DRAGNET_SESSION_MAX_USES',
        group: 'proxies',
        default: SESSION_DEFAULTS.maxUses,
        doc: 'requests one session (exit, cookies, fingerprint) makes before it is retired',
        schema: wholeAtLeast1(),
    }),
    maxRate: option({
        flag: 'max-rate',
        env: 'DRAGNET_MAX_RATE',
        group: 'proxies',
        defaultText: "the site's maxRate, else no limit",
        doc: 'most requests per second to the site, over every exit and worker (0.5: one every 2 s)',
        schema: number().positive('must be above 0').optional(),
    }),
    crawlDelay: option({
        flag: 'crawl-delay',
        env: 'DRAGNET_CRAWL_DELAY',
        group: 'proxies',
        default: onOffDefault(true),
        doc:
            "on: space the site's requests by its robots.txt Crawl-delay, capped at --max-crawl-delay-secs; off: " +
            'ignore it',
        schema: onOff(),
    }),
    maxCrawlDelaySecs: option({
        flag: 'max-crawl-delay-secs',
        env: 'DRAGNET_MAX_CRAWL_DELAY_SECS',
        group: 'proxies',
        default: POLITENESS_DEFAULTS.maxCrawlDelaySecs,
        doc: 'the longest Crawl-delay honoured; a longer one is cut to this',
        schema: number().min(0, 'must be 0 or more'),
    }),
};
