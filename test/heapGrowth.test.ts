import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { NODE_FLAGS } from '../src/heapGrowth.js';

const root = new URL('../', import.meta.url);

describe('NODE_FLAGS', () => {
    // The bench's crawler child takes them from src/heapGrowth.ts; the other two must say the same.
    it('are what `npm start` and the Docker image start dragnet with', () => {
        const start = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start;
        const entrypoint = /^ENTRYPOINT (.+)$/m.exec(readFileSync(new URL('Dockerfile', root), 'utf8'))?.[1] ?? '';
        for (const flag of NODE_FLAGS) {
            assert.ok(start.split(' ').includes(flag), `package.json start script lacks ${flag}: ${start}`);
            assert.ok((JSON.parse(entrypoint) as string[]).includes(flag), `Dockerfile ENTRYPOINT lacks ${flag}: ${entrypoint}`);
        }
    });
});
