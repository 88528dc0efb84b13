import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { browserProblem } from '../../src/fetch/browserStage.js';
import { findChromium } from '../../src/fetch/chromium.js';

describe('browserProblem', () => {
    it('says how to get a browser when none was found', async () => {
        assert.match((await browserProblem(undefined)) ?? '', /no Chromium found.*apt-get install -y chromium.*CHROMIUM_PATH/);
    });

    it('names the binary and the launch error when the browser does not start, without throwing', async () => {
        const problem = await browserProblem('/bin/false');
        assert.match(problem ?? '', /^Chromium at \/bin\/false does not start \(.+\); install one/);
        assert.doesNotMatch(problem ?? '', /\n/, 'one line');
    });

    it('finds no problem with a working Chromium', { skip: findChromium() ? false : 'no Chromium found' }, async () => {
        assert.equal(await browserProblem(findChromium()), undefined);
    });
});
