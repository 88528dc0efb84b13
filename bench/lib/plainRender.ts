/**
 * One run of the render suite's baseline: plain Crawlee's PlaywrightCrawler (crawlers/plainPlaywright.ts)
 * over a fresh shop, in a child process whose tree (Node and Chromium) is sampled from /proc as
 * dragnet's is, so both are measured the same way: products stored per second of the crawl call,
 * CPU of the whole tree per product, and the tree's peak PSS and RSS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startShop, type ShopOptions } from '../../src/demo/shop.js';
import type { PlainRenderResult } from '../crawlers/plainPlaywright.js';
import { AS_PUBLISHED } from './asPublished.js';
import type { TreeSample } from './processTree.js';
import { runRenderChild } from './renderChild.js';
import { round } from './stats.js';

/** What both crawlers are compared on; dragnet's come from its RenderFigures (`versusFigures`). */
export interface VersusFigures {
    productsPerSec: number;
    items: number;
    durationSec: number;
    /** CPU seconds of Node and Chromium together, per product stored. */
    cpuSecPerProduct: number;
    peakPssMb: number | null;
    peakRssMb: number;
}

const childScript = fileURLToPath(new URL('../crawlers/plainPlaywright.ts', import.meta.url));

export async function runPlainRender(
    shopOptions: ShopOptions,
    sampleIntervalMs: number,
): Promise<VersusFigures | { error: string }> {
    const shop = await startShop(shopOptions);
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-bench-plain-render-'));
    try {
        const outcome = await runRenderChild<PlainRenderResult>({
            script: childScript,
            nodeFlags: AS_PUBLISHED,
            renderCase: { shopUrl: shop.url },
            storageDir,
            limitSec: 120 + (shopOptions.products ?? 100) * 3,
            sampleIntervalMs,
        });
        if ('error' in outcome) return outcome;
        return versusFigures({
            items: outcome.result.items,
            durationSec: outcome.result.durationSec,
            samples: outcome.samples,
        });
    } finally {
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
    }
}

/** The compared figures from a run's items, duration and tree samples. */
export function versusFigures({
    items,
    durationSec,
    samples,
}: {
    items: number;
    durationSec: number;
    samples: TreeSample[];
}): VersusFigures {
    const last = samples.at(-1)?.cpuSecByGroup ?? {};
    const cpuSec = (last.node ?? 0) + (last.browser ?? 0);
    const pss = samples.map((sample) => sample.pssMb).filter((mb): mb is number => mb !== undefined);
    return {
        productsPerSec: round(items / durationSec, 2),
        items,
        durationSec: round(durationSec, 2),
        cpuSecPerProduct: round(cpuSec / Math.max(1, items), 3),
        peakPssMb: pss.length === 0 ? null : Math.round(Math.max(...pss)),
        peakRssMb: Math.round(
            Math.max(
                0,
                ...samples.map((sample) => (sample.rssMbByGroup.node ?? 0) + (sample.rssMbByGroup.browser ?? 0)),
            ),
        ),
    };
}
