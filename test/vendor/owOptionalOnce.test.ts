/**
 * package.json makes vendor/ow-optional-once the `ow` of Crawlee: the published ow 0.28.2 with its
 * `ow.optional` built once instead of at every access. This fails if an upgrade gives Crawlee
 * another ow, if `ow.optional` is built anew again, or if validation through the wrapper differs.
 */
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { BasePredicate, Ow } from 'ow-as-published';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const vendored = fileURLToPath(new URL('../../vendor/ow-optional-once/index.cjs', import.meta.url));

// Both are reached as Crawlee reaches ow, through require (untyped), and typed as the published ow.
const crawleeRequire = createRequire(join(projectRoot, 'node_modules', '@crawlee/core', 'package.json'));
const wrapperPath = crawleeRequire.resolve('ow');
const wrapper = crawleeRequire('ow');
const ow: Ow = wrapper.default;
const publishedModule = createRequire(wrapperPath)('ow-as-published');
const published: Ow = publishedModule.default;

describe("Crawlee's ow builds ow.optional once", () => {
    it('is the wrapper', () => {
        assert.equal(realpathSync(wrapperPath), vendored, `Crawlee's ow resolves ${wrapperPath}`);
    });

    it('gives one ow.optional, where the published ow builds a new one at every access', () => {
        assert.notEqual(
            published.optional,
            published.optional,
            'the published ow builds ow.optional anew: the wrapper has a reason to be',
        );
        assert.equal(ow.optional, ow.optional);
    });

    it('still makes a new predicate at every read, so a chain changes no other validation', () => {
        assert.notEqual(ow.optional.string, ow.optional.string);
        const atLeastThree = ow.optional.string.minLength(3);
        assert.throws(() => ow('ab', atLeastThree), { name: 'ArgumentError' });
        assert.doesNotThrow(() => ow('ab', ow.optional.string));
    });

    it('validates as the published ow does', () => {
        const cases: [unknown, (o: Ow) => BasePredicate][] = [
            [undefined, (o) => o.optional.string],
            [5, (o) => o.optional.string],
            ['x', (o) => o.string.minLength(2)],
            [{ id: 1 }, (o) => o.object.partialShape({ id: o.string, handledAt: o.optional.string })],
            [{ id: 'a' }, (o) => o.object.partialShape({ id: o.string, handledAt: o.optional.string })],
            [[1, 'a'], (o) => o.array.ofType(o.any(o.number, o.string))],
            [null, (o) => o.optional.object],
        ];
        for (const [value, predicate] of cases) {
            const outcome = (o: Ow) => {
                try {
                    o(value, predicate(o));
                    return 'valid';
                } catch (error) {
                    return `${(error as Error).name}: ${(error as Error).message}`;
                }
            };
            assert.equal(outcome(ow), outcome(published), `ow(${JSON.stringify(value)}, ...)`);
            assert.equal(ow.isValid(value, predicate(ow)), published.isValid(value, predicate(published)));
        }
        assert.ok(
            ['valid', 'ArgumentError'].every((kind) =>
                cases.some(
                    ([value, predicate]) => (ow.isValid(value, predicate(ow)) ? 'valid' : 'ArgumentError') === kind,
                ),
            ),
            'both outcomes are tried',
        );
        assert.throws(() => ow.create(ow.number)('no', 'count'), { name: 'ArgumentError', message: /count/ });
    });

    it('exports what the published ow exports', () => {
        assert.deepEqual(Object.keys(wrapper).sort(), Object.keys(publishedModule).sort());
        assert.equal(wrapper.__esModule, true);
        assert.equal(wrapper.ArgumentError, publishedModule.ArgumentError);
    });
});
