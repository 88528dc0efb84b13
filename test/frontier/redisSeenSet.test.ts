// Runs against the real Redis on 127.0.0.1:6379; each test writes under its own prefix and deletes it afterwards.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { bloomPositions } from '../../src/frontier/bloomSeenSet.js';
import { RedisBloomSeenSet } from '../../src/frontier/redisBloomSeenSet.js';
import { deleteKeysUnder, RedisSeenSet, scanKeysUnder } from '../../src/frontier/redisSeenSet.js';

const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
after(() => redis.quit());

const urls = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `https://shop.example/products/${from + i}`);

/** A fresh key prefix whose keys are deleted when the test ends. */
function prefix(t: TestContext): string {
    const key = `dragnet-test:${randomUUID()}`;
    t.after(() => deleteKeysUnder(redis, key));
    return key;
}

async function keysUnder(key: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const batch of scanKeysUnder(redis, key)) keys.push(...batch);
    return keys.sort();
}

function shuffled<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
}

/**
 * Two workers, each on its own connection, add the same 5,000 keys at once in different orders,
 * each a 500-key batch after another, so their batches interleave in Redis.
 */
async function raceTwoWorkers(
    open: (connection: Redis) => Promise<{ add(keys: readonly string[]): Promise<boolean[]> }>,
) {
    const keys = urls(0, 5_000);
    const connections = [redis.duplicate(), redis.duplicate()];
    try {
        const workers = await Promise.all(connections.map(open));
        const orders = [keys, shuffled(keys)];
        const answers = await Promise.all(
            workers.map(async (worker, w) => {
                const order = orders[w]!;
                const admitted: string[] = [];
                for (let from = 0; from < order.length; from += 500) {
                    const batch = order.slice(from, from + 500);
                    const replies = await worker.add(batch);
                    admitted.push(...batch.filter((_, i) => replies[i]));
                }
                return admitted;
            }),
        );
        const newTo = answers.flat();
        assert.equal(newTo.length, keys.length, 'each key is new to one worker only');
        assert.equal(new Set(newTo).size, keys.length, 'and every key is new to one of them');
        assert.ok(
            answers.every((admitted) => admitted.length > 0),
            `both workers admitted some: ${answers.map((a) => a.length)}`,
        );
    } finally {
        await Promise.all(connections.map((connection) => connection.quit()));
    }
}

test('exact: a key is new once, seen afterwards, and new once within one call', async (t) => {
    const key = prefix(t);
    const seen = await RedisSeenSet.open(redis, { key, expectedUrls: 10_000 });
    assert.deepEqual(await seen.add(['a', 'b', 'a']), [true, true, false]);
    assert.deepEqual(await seen.add(['b', 'c']), [false, true]);
    assert.deepEqual(await seen.add([]), []);
    assert.equal(seen.size, 3);
    assert.deepEqual(seen.describe(), { kind: 'exact', urls: 3 });
    assert.ok(
        (await keysUnder(key)).every((k) => k.startsWith(`${key}:`)),
        'every key it writes is under its prefix',
    );
});

test('exact: has() looks without adding, across chunks', async (t) => {
    const key = prefix(t);
    const seen = await RedisSeenSet.open(redis, { key, expectedUrls: 10_000 });
    await seen.add(urls(0, 1_500));
    const answers = await seen.has(urls(1_000, 1_500)); // two chunks: 500 held, 1,000 not
    assert.deepEqual([answers.slice(0, 500).every(Boolean), answers.slice(500).some(Boolean)], [true, false]);
    assert.equal((await RedisSeenSet.open(redis, { key })).size, 1_500, 'the fleet-wide count is unchanged');
    assert.equal(answers.length, 1_500);
    assert.equal(
        (await seen.add(urls(1_500, 1_000))).filter(Boolean).length,
        1_000,
        'what has() looked at is still new',
    );
});

test('exact: a call past the chunk size is split, and a repeat across chunks is still new once', async (t) => {
    const seen = await RedisSeenSet.open(redis, { key: prefix(t), expectedUrls: 100_000 });
    const keys = [...urls(0, 10_000), 'https://shop.example/products/5'];
    const answers = await seen.add(keys);
    assert.equal(answers.filter(Boolean).length, 10_000);
    assert.equal(answers.at(-1), false);
    assert.ok((await seen.add(urls(0, 10_000))).every((isNew) => !isNew));
    assert.equal(seen.size, 10_000);
});

test('exact: two workers adding the same keys at once: each key is new to exactly one', async (t) => {
    const key = prefix(t);
    await raceTwoWorkers((connection) => RedisSeenSet.open(connection, { key, expectedUrls: 5_000 }));
    const reopened = await RedisSeenSet.open(redis, { key });
    assert.equal(reopened.size, 5_000, 'the fleet-wide count');
});

test('exact: a later opener uses the stored layout whatever expectedUrls it passes', async (t) => {
    const key = prefix(t);
    const first = await RedisSeenSet.open(redis, { key, expectedUrls: 1_000 });
    assert.equal(first.buckets, 16, 'ceil(1000 / 64) = 16 buckets');
    await first.add(urls(0, 1_000));
    const second = await RedisSeenSet.open(redis, { key, expectedUrls: 10_000_000 });
    assert.equal(second.buckets, 16);
    assert.equal(second.size, 1_000);
    assert.ok(
        (await second.add(urls(0, 1_000))).every((isNew) => !isNew),
        'the second worker finds what the first added',
    );
    const buckets = (await keysUnder(key)).filter((k) => /:\d+$/.test(k));
    assert.equal(buckets.length, 16);
    assert.equal(await redis.object('ENCODING', buckets[0]!), 'listpack', 'buckets keep the compact encoding');
    await assert.rejects(RedisBloomSeenSet.open(redis, { key }), /holds an exact seen-set, not a bloom one/);
});

test('exact: clear() empties the set, keeps its layout, and touches no other prefix', async (t) => {
    const key = prefix(t);
    const neighbour = prefix(t);
    const seen = await RedisSeenSet.open(redis, { key, expectedUrls: 1_000 });
    const other = await RedisSeenSet.open(redis, { key: neighbour });
    await seen.add(urls(0, 1_000));
    await other.add(['kept']);
    await seen.clear();
    assert.deepEqual(await keysUnder(key), [`${key}:meta`], 'only the layout is left');
    assert.equal(seen.size, 0);
    assert.equal((await RedisSeenSet.open(redis, { key, expectedUrls: 10_000_000 })).buckets, 16);
    assert.deepEqual(await seen.add(['https://shop.example/products/0']), [true]);
    assert.deepEqual(await other.add(['kept']), [false]);
});

test('bloom: no false negatives, and false positives near the configured rate', async (t) => {
    const key = prefix(t);
    const seen = await RedisBloomSeenSet.open(redis, { key, expectedUrls: 10_000, falsePositiveRate: 0.01 });
    assert.equal(seen.hashCount, 7);
    const first = await seen.add(urls(0, 10_000));
    // All keys distinct: every "seen" is a false positive.
    const wronglySeenWhileFilling = first.filter((isNew) => !isNew).length;
    assert.ok(wronglySeenWhileFilling < 10_000 * 0.01, `false positives while filling: ${wronglySeenWhileFilling}`);
    assert.ok(
        (await seen.add(urls(0, 10_000))).every((isNew) => !isNew),
        'every key added before is reported seen',
    );
    assert.equal(seen.size, 10_000 - wronglySeenWhileFilling);

    // 10,000 other keys probed against the full filter without adding them (adding would fill it
    // further), once with has() and once by reading the bitmap at the positions BloomSeenSet would use.
    const bitmap = (await redis.getBuffer(`${key}:bits:0`))!;
    // Redis numbers bits from the top of each byte.
    const isSet = (bit: number) => ((bitmap[bit >> 3] ?? 0) & (0x80 >> (bit & 7))) !== 0;
    const others = urls(1_000_000, 10_000);
    const heldByBits = others.map((other) => bloomPositions(other, seen.hashCount, seen.bitCount).every(isSet));
    const wronglySeen = heldByBits.filter(Boolean).length;
    assert.ok(wronglySeen / others.length < 0.03, `false-positive rate ${wronglySeen / others.length}`);
    assert.deepEqual(await seen.has(others), heldByBits, 'has() reads the same bits');
    assert.deepEqual((await redis.getBuffer(`${key}:bits:0`))!, bitmap, 'and sets none');

    const { kind, urls: count, falsePositiveRate = 0, expectedSkipped = 0, bytes } = seen.describe();
    assert.equal(kind, 'bloom');
    assert.equal(count, seen.size);
    assert.ok(Math.abs(falsePositiveRate - 0.01) < 0.002, `estimated rate ${falsePositiveRate} at ${count} URLs`);
    const skipped = wronglySeenWhileFilling;
    assert.ok(
        expectedSkipped > skipped / 2 && expectedSkipped < skipped * 2,
        `estimated skips ${expectedSkipped} vs ${skipped}`,
    );
    assert.equal(bytes, Math.ceil(seen.bitCount / 8));
    assert.deepEqual(await seen.add(['a', 'a']), [true, false], 'a key repeated within one call is new once');
});

test('bloom: a filter cut into several bitmaps answers as one', async (t) => {
    const key = prefix(t);
    const seen = await RedisBloomSeenSet.open(redis, {
        key,
        expectedUrls: 2_000,
        falsePositiveRate: 0.001,
        bitsPerKey: 5_000,
    });
    assert.ok(seen.bitCount > 25_000, `${seen.bitCount} bits`);
    const first = await seen.add(urls(0, 2_000));
    assert.ok(first.filter(Boolean).length > 1_990);
    assert.ok((await seen.add(urls(0, 2_000))).every((isNew) => !isNew));
    assert.ok((await seen.has(urls(0, 2_000))).every(Boolean), 'has() finds them in every bitmap');
    assert.ok((await seen.has(urls(10_000, 100))).filter(Boolean).length < 5, 'and not others');
    assert.equal(await seen.claim('https://shop.example/claimed', 'page-a'), true);
    assert.equal(await seen.claim('https://shop.example/claimed', 'page-a'), true);
    assert.equal(await seen.claim('https://shop.example/claimed', 'page-b'), false);
    assert.deepEqual(
        await seen.has(['https://shop.example/claimed']),
        [true],
        'a claim sets its bits in every bitmap it falls in',
    );
    const bitmaps = (await keysUnder(key)).filter((k) => k.includes(':bits:'));
    assert.equal(bitmaps.length, Math.ceil(seen.bitCount / 5_000));
    for (const bitmap of bitmaps)
        assert.ok((await redis.strlen(bitmap)) <= 5_000 / 8, `${bitmap} stays within its share`);
});

test('bloom: two workers adding the same keys at once: each key is new to exactly one', async (t) => {
    const key = prefix(t);
    await raceTwoWorkers((connection) => RedisBloomSeenSet.open(connection, { key, expectedUrls: 100_000 }));
});

test('bloom: a later opener uses the stored parameters; clear() empties the filter', async (t) => {
    const key = prefix(t);
    const first = await RedisBloomSeenSet.open(redis, { key, expectedUrls: 10_000, falsePositiveRate: 0.01 });
    await first.add(urls(0, 100));
    const second = await RedisBloomSeenSet.open(redis, { key, expectedUrls: 1_000_000, falsePositiveRate: 1e-9 });
    assert.deepEqual([second.bitCount, second.hashCount, second.size], [first.bitCount, first.hashCount, 100]);
    await second.clear();
    assert.deepEqual(await keysUnder(key), [`${key}:meta`]);
    assert.ok((await first.add(urls(0, 100))).every(Boolean), 'all new again after clear()');
    await assert.rejects(RedisSeenSet.open(redis, { key }), /holds a bloom seen-set, not an exact one/);
});

for (const kind of ['exact', 'bloom'] as const) {
    test(`${kind}: a claim is its owner's, on any worker, and no one else's`, async (t) => {
        const key = prefix(t);
        const open = (connection: Redis) =>
            kind === 'exact'
                ? RedisSeenSet.open(connection, { key, expectedUrls: 1_000 })
                : RedisBloomSeenSet.open(connection, { key, expectedUrls: 1_000 });
        const other = redis.duplicate();
        t.after(() => other.quit());
        const [first, second] = [await open(redis), await open(other)];
        assert.equal(await first.claim('canonical', 'page-red'), true);
        assert.equal(await second.claim('canonical', 'page-red'), true, "the page's retry on another worker");
        assert.equal(await second.claim('canonical', 'page-blue'), false);
        assert.deepEqual(await first.has(['canonical']), [true]);
        assert.deepEqual(await first.add(['canonical']), [false], 'a link to it is not new');
        await first.add(['linked']);
        assert.equal(await second.claim('linked', 'page-red'), false, "a URL added as a link is no one's to claim");
        assert.equal((await open(redis)).size, 2, 'the fleet-wide count includes the claim');
    });
}
