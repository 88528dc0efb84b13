import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RenderLearner } from '../../../src/fetch/browser/renderLearning.js';

/** Feeds a route's cheap-fetch outcomes the way the pipeline does: ask first, record only cheap fetches. */
function crawlPages(learner: RenderLearner, route: string, pages: number, needsBrowser: (page: number) => boolean) {
    let cheap = 0;
    for (let page = 0; page < pages; page++) {
        if (learner.goDirectToBrowser(route)) continue;
        cheap += 1;
        learner.record(route, needsBrowser(page));
    }
    return cheap;
}

describe('RenderLearner', () => {
    it(`sends a route that always needs the browser there \
directly after minSamples, probing 1 page in probeEvery`, () => {
        const learner = new RenderLearner({ window: 50, threshold: 0.9, minSamples: 20, probeEvery: 25 });
        const cheap = crawlPages(learner, 'product', 1020, () => true);
        assert.equal(cheap, 20 + 1000 / 25);
        const decision = learner.decisions().product!;
        assert.equal(decision.mode, 'browser-direct');
        assert.equal(decision.directToBrowser, 1000 - 40);
        assert.equal(decision.probes, 40);
        assert.equal(decision.switches, 1);
        assert.equal(decision.neededBrowserShare, 1);
    });

    it(`decides nothing before minSamples, and keeps a route whose \
pages mostly do not need the browser on the cheap path`, () => {
        const learner = new RenderLearner({ minSamples: 20 });
        assert.equal(
            crawlPages(learner, 'product', 19, () => true),
            19,
        );
        assert.equal(learner.decisions().product!.mode, 'http-first');
        const mixed = new RenderLearner();
        assert.equal(
            crawlPages(mixed, 'product', 1000, (page) => page % 5 === 0),
            1000,
            '20% script-only stays cheap-first',
        );
    });

    it('goes back to the cheap path when the probes stop needing the browser', () => {
        const learner = new RenderLearner({ window: 20, threshold: 0.9, minSamples: 10, probeEvery: 10 });
        crawlPages(learner, 'product', 30, () => true);
        assert.equal(learner.decisions().product!.mode, 'browser-direct');
        crawlPages(learner, 'product', 100, () => false);
        const decision = learner.decisions().product!;
        assert.equal(decision.mode, 'http-first');
        assert.equal(decision.switches, 2);
        assert.equal(learner.goDirectToBrowser('product'), false);
    });

    it('keeps routes apart', () => {
        const learner = new RenderLearner({ minSamples: 5, window: 5 });
        crawlPages(learner, 'js', 10, () => true);
        crawlPages(learner, 'static', 10, () => false);
        assert.equal(learner.decisions().js!.mode, 'browser-direct');
        assert.equal(learner.decisions().static!.mode, 'http-first');
    });
});
