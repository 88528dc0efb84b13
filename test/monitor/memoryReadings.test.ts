/**
 * The autoscaled pools' memory readings (src/monitor/memoryReadings.ts): no `ps` while the process
 * has no child, Crawlee's reading (which spawns `ps`) while it has one. A `ps` first on PATH
 * records each call and runs the real one.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Configuration } from '@crawlee/core';
import type { MemoryInfo } from '@crawlee/utils';
import { readOwnMemoryWithoutChildren } from '../../src/monitor/memoryReadings.js';

describe('memory readings for the autoscaled pools', () => {
    let dir: string;
    let calls: string;
    const path = process.env.PATH;
    const reading = () =>
        // biome-ignore lint/plugin/noDoubleCast: the memory reading is private in Crawlee's types
        readOwnMemoryWithoutChildren(new Configuration()).getEventManager() as unknown as {
            getMemoryInfo(): Promise<MemoryInfo>;
        };
    const psCalls = async () => (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'dragnet-ps-'));
        calls = join(dir, 'calls');
        await writeFile(join(dir, 'ps'), `#!/bin/sh\necho "$@" >> '${calls}'\nPATH='${path}' exec ps "$@"\n`);
        await chmod(join(dir, 'ps'), 0o755);
        process.env.PATH = `${dir}:${path}`;
    });
    after(async () => {
        process.env.PATH = path;
        await rm(dir, { recursive: true, force: true });
    });

    it(`reads the process's own RSS without ps while it has \
no child process, after one reading of Crawlee's`, async () => {
        const events = reading();
        const first = await events.getMemoryInfo();
        assert.equal(await psCalls(), 1, "the first reading is Crawlee's: it learns the total");
        // The first reading's ps may still hold its handle for a moment.
        while (process.getActiveResourcesInfo().includes('ProcessWrap'))
            await new Promise((resolve) => setTimeout(resolve, 10));
        const next = await events.getMemoryInfo();
        assert.equal(await psCalls(), 1, 'no ps for the next');
        assert.equal(next.totalBytes, first.totalBytes);
        assert.equal(next.childProcessesBytes, 0);
        const rss = process.memoryUsage.rss();
        assert.ok(
            Math.abs(next.mainProcessBytes - rss) < 64 * 2 ** 20,
            `${next.mainProcessBytes} against an RSS of ${rss}`,
        );
    });

    it("reads with Crawlee's ps while a child process runs, its memory included", async () => {
        const events = reading();
        await events.getMemoryInfo();
        const before = await psCalls();
        const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)']);
        try {
            await new Promise((resolve) => setTimeout(resolve, 300));
            const withChild = await events.getMemoryInfo();
            assert.equal(await psCalls(), before + 1);
            assert.ok(
                withChild.childProcessesBytes > 10 * 2 ** 20,
                `the child's ${withChild.childProcessesBytes} bytes`,
            );
        } finally {
            child.kill();
        }
    });
});
