/**
 * The site module `npm run new-site` writes must stay TypeScript whatever its start URL holds: the
 * URL lands in the header comment, where a `*` and `/` would end the comment early, and in strings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { siteTemplate } from '../../src/authoring/siteTemplate.js';

describe('siteTemplate', () => {
    it('ends its header comment where it means to, with a start URL that holds */', () => {
        for (const startUrl of ['http://127.0.0.1:8080/a*/b', 'http://127.0.0.1/plain']) {
            const source = siteTemplate({ name: 'star', startUrl });
            const headerEnd = source.indexOf('*/');
            assert.ok(
                headerEnd > source.indexOf('npm start -- --site star'),
                `${startUrl}: the header comment ends early`,
            );
            assert.ok(
                source.includes(`startUrls: [${JSON.stringify(startUrl)}]`),
                'the start URL itself is kept as given',
            );
        }
    });
});
