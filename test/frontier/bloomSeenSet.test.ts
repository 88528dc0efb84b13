import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BloomSeenSet } from '../../src/frontier/bloomSeenSet.js';
import { MemorySeenSet } from '../../src/frontier/seenSet.js';

const urls = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `https://shop.example/products/${from + i}`);

test('a key is new once, seen afterwards: no false negatives', async () => {
    const seen = new BloomSeenSet({ expectedItems: 10_000, falsePositiveRate: 1e-4 });
    const first = await seen.add(urls(0, 5_000));
    const again = await seen.add(urls(0, 5_000));
    assert.ok(
        again.every((isNew) => !isNew),
        'every key added before is reported seen',
    );
    assert.equal(seen.size, first.filter(Boolean).length);
    assert.deepEqual(await seen.add(['a', 'a']), [true, false], 'a key repeated within one call is new once');
});

test('has() looks without adding', async () => {
    const seen = new BloomSeenSet({ expectedItems: 10_000, falsePositiveRate: 1e-4 });
    await seen.add(urls(0, 100));
    assert.ok((await seen.has(urls(0, 100))).every(Boolean));
    assert.ok((await seen.has(urls(100, 100))).every((held) => !held));
    assert.equal(seen.size, 100);
    assert.ok((await seen.add(urls(100, 100))).every(Boolean), 'what has() looked at is still new');
});

test('sized from the expected count and rate, as the textbook formulas give', () => {
    const seen = new BloomSeenSet({ expectedItems: 1_000_000, falsePositiveRate: 0.01 });
    assert.equal(seen.hashCount, 7);
    assert.ok(Math.abs(seen.bitCount / 1_000_000 - 9.585) < 0.01, `${seen.bitCount / 1_000_000} bits per item`);
    assert.equal(seen.bytes, Math.ceil(seen.bitCount / 8));
});

test('at capacity the false positives stay near the configured rate, and the estimate tracks them', async () => {
    const expectedItems = 50_000;
    const seen = new BloomSeenSet({ expectedItems, falsePositiveRate: 0.01 });
    const answers = await seen.add(urls(0, expectedItems));
    // All keys are distinct: every "seen" is a false positive.
    const wronglySeen = answers.filter((isNew) => !isNew).length;
    assert.ok(wronglySeen > 0 && wronglySeen < expectedItems * 0.01, `false positives: ${wronglySeen}`);
    const { expectedSkipped = 0, falsePositiveRate = 0 } = seen.describe();
    assert.ok(Math.abs(falsePositiveRate - 0.01) < 0.003, `rate at capacity ${falsePositiveRate}`);
    assert.ok(
        expectedSkipped > wronglySeen / 2 && expectedSkipped < wronglySeen * 2,
        `estimate ${expectedSkipped} vs ${wronglySeen}`,
    );
});

test('options out of range are refused', () => {
    assert.throws(() => new BloomSeenSet({ expectedItems: 0 }), RangeError);
    assert.throws(() => new BloomSeenSet({ falsePositiveRate: 1 }), RangeError);
});

for (const [kind, open] of [
    ['exact', () => new MemorySeenSet()],
    ['bloom', () => new BloomSeenSet({ expectedItems: 1_000 })],
] as const) {
    test(`in memory, ${kind}: a claim is its owner's and no one else's`, async () => {
        const seen = open();
        assert.equal(await seen.claim('canonical', 'page-red'), true);
        assert.equal(await seen.claim('canonical', 'page-red'), true, "the page's retry");
        assert.equal(await seen.claim('canonical', 'page-blue'), false);
        assert.deepEqual(await seen.add(['canonical']), [false], 'a link to it is not new');
        await seen.add(['linked']);
        assert.equal(await seen.claim('linked', 'page-red'), false, "a URL added as a link is no one's to claim");
        assert.equal(seen.size, 2);
    });
}
