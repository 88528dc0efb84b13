import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BROWSER_CONCURRENCY_DEFAULTS, browserPages } from '../../../src/fetch/browser/browserConcurrency.js';

describe('browserPages', () => {
    const plenty = 64 * 1024;

    it('scales with the cores when memory is plenty, starting at the most and keeping one page per core', () => {
        assert.deepEqual(browserPages({ cores: 2, memoryMb: plenty }), { min: 2, start: 3, max: 3 });
        assert.deepEqual(browserPages({ cores: 8, memoryMb: plenty }), { min: 8, start: 12, max: 12 });
    });

    it('holds what the memory budget holds after the browser and Node', () => {
        const { pageMb, baseMb } = BROWSER_CONCURRENCY_DEFAULTS;
        assert.deepEqual(browserPages({ cores: 8, memoryMb: baseMb + 4 * pageMb }), { min: 4, start: 4, max: 4 });
        assert.deepEqual(
            browserPages({ cores: 8, memoryMb: 256 }),
            { min: 1, start: 1, max: 1 },
            'one page however small the budget',
        );
    });

    it('takes --browser-concurrency as a ceiling, never as a floor', () => {
        assert.deepEqual(browserPages({ cores: 8, memoryMb: plenty, limit: 2 }), { min: 2, start: 2, max: 2 });
        assert.deepEqual(browserPages({ cores: 2, memoryMb: plenty, limit: 50 }), { min: 2, start: 3, max: 3 });
    });

    it('defaults to this machine', () => {
        const pages = browserPages();
        assert.ok(pages.max >= 1 && pages.min >= 1 && pages.min <= pages.start && pages.start === pages.max);
    });
});
