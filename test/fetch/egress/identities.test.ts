import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ExitBreaker } from '../../../src/fetch/egress/exitBreaker.js';
import { exitKey, Identities, Identity, type Exit } from '../../../src/fetch/egress/identities.js';
import { resolveTiers } from '../../../src/fetch/egress/proxyTiers.js';

const DC = [
    'http://dc-1:pw-one@127.0.0.1:8001',
    'http://dc-2:pw-two@127.0.0.1:8002',
    'http://dc-3:pw-three@127.0.0.1:8003',
];
const SECRETS = ['pw-one', 'pw-two', 'pw-three', 'pw-res'];
const tiers = () =>
    resolveTiers([
        { name: 'dc', proxyUrls: DC },
        { name: 'res', proxyUrls: ['http://res-1:pw-res@127.0.0.1:9001'] },
        { name: 'home', proxyUrls: 'direct' },
    ]);

/** A clock the test moves, in ms. */
function clock() {
    const time = { now: 1_000_000 };
    return { time, now: () => time.now };
}

/** The client hints' platform of a desktop Chrome user agent. */
const osOf = (userAgent: string) =>
    /Windows NT/.test(userAgent) ? 'Windows' : /Mac OS X/.test(userAgent) ? 'macOS' : 'Linux';

/** Chrome's own order of the navigation headers it sends (HTTP/2), for those present. */
const CHROME_ORDER = [
    'sec-ch-ua',
    'sec-ch-ua-mobile',
    'sec-ch-ua-platform',
    'upgrade-insecure-requests',
    'user-agent',
    'accept',
    'sec-fetch-site',
    'sec-fetch-mode',
    'sec-fetch-user',
    'sec-fetch-dest',
    'accept-encoding',
    'accept-language',
];

describe('Identity', () => {
    it('has a Chrome header set whose client hints name the user agent’s version and OS (200 of them)', () => {
        const exit: Exit = { tier: 0, tierName: 'home', name: 'direct' };
        const userAgents = new Set<string>();
        const notChrome: string[] = [];
        for (let i = 0; i < 200; i++) {
            const identity = new Identity(exit);
            const { headers } = identity;
            const names = Object.keys(headers);
            assert.deepEqual(
                names,
                names.map((name) => name.toLowerCase()),
                'lower-case names',
            );
            const major = /Chrome\/(\d+)\./.exec(identity.userAgent)?.[1];
            assert.ok(major, identity.userAgent);
            assert.equal(identity.userAgent, headers['user-agent']);
            // The Chromium brand names the user agent's Chrome version, as does Google Chrome's when there.
            const brands = [...(headers['sec-ch-ua'] ?? '').matchAll(/"([^"]+)";v="([^"]+)"/g)].map(
                ([, brand, version]) => ({ brand: brand!, version: version! }),
            );
            const version = (name: string) => brands.find(({ brand }) => brand === name)?.version;
            assert.equal(version('Chromium'), major, `${headers['sec-ch-ua']} for ${identity.userAgent}`);
            if (
                version('Google Chrome') === undefined ||
                /\) Chrome\/[\d.]+ Safari\/[\d.]+$/.test(identity.userAgent) === false
            )
                notChrome.push(`${headers['sec-ch-ua']} | ${identity.userAgent}`);
            else assert.equal(version('Google Chrome'), major);
            assert.notEqual(headers['sec-ch-ua-mobile'], '?1');
            const os = osOf(identity.userAgent);
            // When present (see the test below for when it is not).
            if (headers['sec-ch-ua-platform'] !== undefined)
                assert.equal(headers['sec-ch-ua-platform'], `"${os}"`, identity.userAgent);
            assert.equal(headers['accept-encoding'], 'gzip, deflate, br');
            assert.ok(
                Object.values(headers).every((value) => !/zstd/i.test(value)),
                'no zstd anywhere',
            );
            const order = names.filter((name) => CHROME_ORDER.includes(name));
            assert.deepEqual(
                order,
                [...order].sort((a, b) => CHROME_ORDER.indexOf(a) - CHROME_ORDER.indexOf(b)),
                'in Chrome’s order',
            );
            const override = identity.userAgentOverride();
            assert.deepEqual(override.userAgentMetadata.brands, brands, 'the browser is told to claim the same brands');
            if (headers['sec-ch-ua-platform'] !== undefined) assert.equal(override.userAgentMetadata.platform, os);
            assert.equal(override.userAgentMetadata.mobile, false);
            assert.equal(identity.browserContextOptions().userAgent, identity.userAgent);
            userAgents.add(identity.userAgent);
        }
        assert.ok(userAgents.size > 1, 'not one fingerprint for everyone');
        const [one, two] = [new Identity(exit), new Identity(exit)];
        assert.notEqual(one.id, two.id);
        assert.notEqual(one.cookieJar, two.cookieJar, 'a jar of its own');
        // A fixed bug, kept as a test (src/fetch/egress/identities.ts, browserHeaders, line 113): the
        // check takes `"Chromium";v=N` alone as a match, so about 14% of sessions (2,000 draws: Brave
        // 12%, bare Chromium 2.5%, DuckDuckGo, now and then an `Atom/26` user agent) are another
        // browser, against "Chrome on the desktop" (line 45).
        assert.deepEqual(notChrome, [], `${notChrome.length} of 200 sets have no "Google Chrome" brand`);
    });

    // A fixed bug, kept as a test (src/fetch/egress/identities.ts, browserHeaders, line 113): a set
    // without sec-ch-ua-platform (or -mobile) is kept, about 1 in 1,000; Chrome always sends these
    // two low-entropy hints, so such a session is a bot manager's easy catch. 5,000 draws meet one
    // almost surely (P(none) < 1%).
    it('always sends sec-ch-ua-platform agreeing with the user agent, and sec-ch-ua-mobile ?0 (5,000 draws)', () => {
        const exit: Exit = { tier: 0, tierName: 'home', name: 'direct' };
        const wrong: string[] = [];
        for (let i = 0; i < 5000; i++) {
            const { headers, userAgent } = new Identity(exit);
            if (headers['sec-ch-ua-platform'] !== `"${osOf(userAgent)}"` || headers['sec-ch-ua-mobile'] !== '?0')
                wrong.push(`${headers['sec-ch-ua-platform']} ${headers['sec-ch-ua-mobile']} for ${userAgent}`);
        }
        assert.deepEqual(wrong, []);
    });
});

describe('Identities', () => {
    it('rotates over a tier’s exits and keeps at most perExit sessions on each', () => {
        const identities = new Identities({ tiers: tiers(), breaker: new ExitBreaker(), perExit: 2 });
        const picked = Array.from({ length: 12 }, () => identities.pick(0)!);
        assert.deepEqual(
            picked.slice(0, 6).map((identity) => identity.exit.name),
            [
                '127.0.0.1:8001',
                '127.0.0.1:8002',
                '127.0.0.1:8003',
                '127.0.0.1:8001',
                '127.0.0.1:8002',
                '127.0.0.1:8003',
            ],
        );
        const byExit = new Map<string, Set<string>>();
        for (const identity of picked)
            byExit.set(identity.exit.name, (byExit.get(identity.exit.name) ?? new Set()).add(identity.id));
        assert.deepEqual(
            [...byExit.values()].map((ids) => ids.size),
            [2, 2, 2],
            'two sessions per exit, reused after that',
        );
        assert.ok(picked.every((identity) => identity.exit.tier === 0 && identity.exit.tierName === 'dc'));
        assert.equal(identities.pick(1)!.exit.name, '127.0.0.1:9001');
        const home = identities.pick(2)!;
        assert.deepEqual([home.exit.name, home.exit.proxyUrl], ['direct', undefined]);
    });

    it('hands out the least used session of a full exit', () => {
        const identities = new Identities({
            tiers: resolveTiers([{ name: 'dc', proxyUrls: [DC[0]!] }]),
            breaker: new ExitBreaker(),
            perExit: 2,
        });
        const [a, b] = [identities.pick(0)!, identities.pick(0)!];
        identities.used(a, 'ok');
        identities.used(a, 'ok');
        identities.used(b, 'ok');
        assert.equal(identities.pick(0), b);
    });

    it('takes a session the caller prefers first, the least used of them, before making one or taking another', () => {
        const identities = new Identities({
            tiers: resolveTiers([{ name: 'dc', proxyUrls: [DC[0]!] }]),
            breaker: new ExitBreaker(),
            perExit: 3,
        });
        const [a, b] = [identities.pick(0)!, identities.pick(0)!];
        identities.used(b, 'ok');
        assert.equal(
            identities.pick(0, (identity) => identity === b),
            b,
            'b is preferred though a is less used and a third may be made',
        );
        const c = identities.pick(0, () => false);
        assert.ok(c !== a && c !== b, 'none preferred: as without a preference, a third session');
        identities.used(a, 'ok');
        identities.used(a, 'ok');
        assert.equal(
            identities.pick(0, (identity) => identity !== c),
            b,
            'of the preferred, the least used',
        );
        identities.used(b, 'blocked');
        assert.notEqual(
            identities.pick(0, (identity) => identity === b),
            b,
            'a retired session is never preferred',
        );
    });

    it('skips exits the breaker holds out, and gives undefined when it holds out all of a tier', () => {
        const { time, now } = clock();
        const breaker = new ExitBreaker({ now, openSecs: 5 });
        const identities = new Identities({ tiers: tiers(), breaker });
        const [first, second, third] = identities.allExits();
        breaker.faulted(exitKey(second!));
        const names = Array.from({ length: 6 }, () => identities.pick(0)!.exit.name);
        assert.ok(!names.includes(second!.name), names.join(' '));
        assert.deepEqual(new Set(names), new Set([first!.name, third!.name]));
        breaker.faulted(exitKey(first!));
        breaker.faulted(exitKey(third!));
        assert.equal(identities.pick(0), undefined);
        assert.ok(identities.pick(1), 'the next tier is untouched');
        time.now += 5000;
        assert.ok(identities.pick(0), 'a trial once the time is up');
    });

    it('retires a session on a block, after maxUses, and on its error score, counting each', () => {
        const identities = new Identities({
            tiers: tiers(),
            breaker: new ExitBreaker(),
            maxUses: 3,
            maxErrorScore: 3,
            perExit: 1,
        });
        const blocked = identities.pick(1)!;
        identities.used(blocked, 'blocked');
        assert.equal(blocked.retiredFor, 'blocked');
        assert.notEqual(identities.pick(1), blocked, 'a new session in its place');

        const worn = identities.pick(2)!;
        identities.used(worn, 'ok');
        identities.used(worn, 'exit');
        identities.used(worn, 'exit');
        identities.used(worn, 'ok');
        assert.equal(worn.retiredFor, undefined, 'exit faults are not the session’s uses');
        identities.used(worn, 'permanent');
        assert.equal(worn.retiredFor, 'max-uses');
        assert.equal(worn.uses, 3);

        const patient = new Identities({ tiers: tiers(), breaker: new ExitBreaker(), maxUses: 100, maxErrorScore: 3 });
        const flaky = patient.pick(0)!;
        for (const outcome of ['transient', 'transient', 'ok', 'transient'] as const) patient.used(flaky, outcome);
        assert.equal(flaky.errorScore, 2.5, 'each success takes half a point back');
        assert.equal(flaky.retiredFor, undefined);
        patient.used(flaky, 'transient');
        assert.equal(flaky.retiredFor, 'errors');
        patient.used(flaky, 'blocked');
        assert.equal(flaky.retiredFor, 'errors', 'a retired session stays retired for its first reason');
        assert.deepEqual(identities.retired, { blocked: 1, 'max-uses': 1, errors: 0 });
        assert.deepEqual(patient.retired, { blocked: 0, 'max-uses': 0, errors: 1 });
    });

    it('gets a live session by id, not a retired one, not one whose exit is held out', () => {
        const { time, now } = clock();
        const breaker = new ExitBreaker({ now });
        const identities = new Identities({ tiers: tiers(), breaker });
        const live = identities.pick(0)!;
        assert.equal(identities.get(live.id), live);
        assert.equal(identities.get(undefined), undefined);
        assert.equal(identities.get('no-such-session'), undefined);
        breaker.faulted(exitKey(live.exit));
        assert.equal(identities.get(live.id), undefined, 'its exit rests');
        breaker.worked(exitKey(live.exit));
        assert.equal(identities.get(live.id), live);
        identities.used(live, 'blocked');
        assert.equal(identities.get(live.id), undefined);
        time.now += 1;
    });

    it('names exits without credentials, #n for proxies sharing a host:port', () => {
        const shared = resolveTiers([
            {
                name: 'rot',
                proxyUrls: [
                    'http://user-a:pw-a@127.0.0.1:8000',
                    'http://user-b:pw-b@127.0.0.1:8000',
                    'http://u:pw-c@127.0.0.1:8009',
                ],
            },
        ]);
        const identities = new Identities({ tiers: shared, breaker: new ExitBreaker() });
        assert.deepEqual(identities.allExits().map(exitKey), [
            'rot/127.0.0.1:8000#1',
            'rot/127.0.0.1:8000#2',
            'rot/127.0.0.1:8009',
        ]);
        const picked = [identities.pick(0)!, identities.pick(0)!];
        assert.notEqual(picked[0]!.exit.proxyUrl, picked[1]!.exit.proxyUrl, 'two exits, two usernames');

        const keys = new Identities({ tiers: tiers(), breaker: new ExitBreaker() }).allExits().map(exitKey);
        assert.deepEqual(keys, [
            'dc/127.0.0.1:8001',
            'dc/127.0.0.1:8002',
            'dc/127.0.0.1:8003',
            'res/127.0.0.1:9001',
            'home/direct',
        ]);
        for (const key of keys)
            for (const secret of [...SECRETS, 'dc-1', 'res-1']) assert.ok(!key.includes(secret), key);
    });
});

describe('ExitBreaker', () => {
    const EXIT = 'dc/127.0.0.1:8001';

    it('opens on a fault, stays shut for openSecs, then lets exactly one trial through', () => {
        const { time, now } = clock();
        const breaker = new ExitBreaker({ now, openSecs: 5, maxOpenSecs: 60 });
        assert.equal(breaker.allows(EXIT), true, 'an exit never seen is let through');
        breaker.faulted(EXIT);
        assert.deepEqual(breaker.counts(EXIT), { faults: 1, opened: 1, open: true });
        time.now += 4999;
        assert.equal(breaker.allows(EXIT), false);
        time.now += 1;
        assert.equal(breaker.allows(EXIT), true, 'the trial');
        assert.equal(breaker.allows(EXIT), false, 'only one while it is out');
        assert.equal(breaker.allows('dc/127.0.0.1:8002'), true, 'other exits are their own');
    });

    it('doubles the opening on each failed trial up to maxOpenSecs, and closes on worked', () => {
        const { time, now } = clock();
        const breaker = new ExitBreaker({ now, openSecs: 5, maxOpenSecs: 30 });
        breaker.faulted(EXIT);
        const openings: number[] = [];
        for (let failedTrial = 0; failedTrial < 5; failedTrial++) {
            const start = time.now;
            while (!breaker.allows(EXIT)) time.now += 100;
            openings.push((time.now - start) / 1000);
            breaker.faulted(EXIT);
        }
        assert.deepEqual(openings, [5, 10, 20, 30, 30]);
        time.now += 30_000;
        assert.equal(breaker.allows(EXIT), true);
        breaker.worked(EXIT);
        assert.equal(breaker.allows(EXIT), true);
        assert.equal(breaker.allows(EXIT), true, 'closed: no trial limit');
        assert.deepEqual(breaker.counts(EXIT), { faults: 6, opened: 6, open: false });
        breaker.faulted(EXIT);
        time.now += 5000;
        assert.equal(breaker.allows(EXIT), true, 'after working, the next opening is the first again (5 s)');
    });

    it('waits for faultsToOpen faults in a row, a success between starting over', () => {
        const { now } = clock();
        const breaker = new ExitBreaker({ now, faultsToOpen: 3 });
        breaker.faulted(EXIT);
        breaker.faulted(EXIT);
        breaker.worked(EXIT);
        breaker.faulted(EXIT);
        breaker.faulted(EXIT);
        assert.equal(breaker.allows(EXIT), true);
        breaker.faulted(EXIT);
        assert.equal(breaker.allows(EXIT), false);
    });

    // A fixed bug, kept as a test (src/fetch/egress/exitBreaker.ts, faulted, lines 63-69): the
    // faults of requests that were already out when the exit opened count as further openings:
    // each one doubles the opening again, so five requests in flight on a proxy that breaks put
    // it out for 5 × 2^4 = 80 s, not 5 s.
    it('does not lengthen an opening for faults of requests already out when it opened', () => {
        const { time, now } = clock();
        const breaker = new ExitBreaker({ now, openSecs: 5, maxOpenSecs: 300 });
        for (let inFlight = 0; inFlight < 5; inFlight++) breaker.faulted(EXIT);
        time.now += 5000;
        assert.equal(breaker.allows(EXIT), true, 'a trial after openSecs');
    });

    // A fixed bug, kept as a test (src/fetch/egress/exitBreaker.ts, allows, lines 48-53): the
    // half-open trial has no end. When the request given the trial never reports back
    // (proxyRouting.begin picks the session, then the politeness wait throws TurnDeferred before
    // the attempt is kept, so end() is never called), `trial` stays true and the exit is held
    // out for the rest of the run.
    it('lets another trial through when the first one never reported back', () => {
        const { time, now } = clock();
        const breaker = new ExitBreaker({ now, openSecs: 5, maxOpenSecs: 60 });
        breaker.faulted(EXIT);
        time.now += 5000;
        assert.equal(breaker.allows(EXIT), true, 'the trial, lost');
        time.now += 60_000 * 10;
        assert.equal(breaker.allows(EXIT), true, 'ten maxOpenSecs later, another trial');
    });
});
