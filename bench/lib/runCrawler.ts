/**
 * The crawlers under comparison, and how one run of one of them is started: a child process
 * of its own (so its peak RSS is its own, and the shop's CPU and memory stay in the parent),
 * given its case as JSON, reporting one JSON line.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ShopOptions } from '../../src/demo/shop.js';
import type { CrawlerCase, CrawlerResult } from '../crawlers/protocol.js';
import { AS_PUBLISHED } from './asPublished.js';
import { startBenchChild, tsxCommand } from './benchChild.js';
import { findScrapy } from './scrapy.js';

/**
 * A crawler under comparison. Its child is a TypeScript file (`script`, run as `node --import tsx
 * <script>`, by another Node binary when `node` names one) or any other command (`command`:
 * Scrapy's `python3 -B <script>`); either is given the case as JSON as its last argument.
 */
export type Crawler = CrawlerDescription & ({ script: string; node?: string } | { command: string[] });

interface CrawlerDescription {
    /** Key in the JSON output. */
    name: string;
    /** How the table names it. */
    label: string;
    /** Why it cannot run on this machine, when it cannot: suites leave it out (see `available`). */
    unavailable?: string;
    /** Node flags before the script's (plain Crawlee's AS_PUBLISHED). */
    nodeFlags?: string[];
    /** Variables for its child, over the bench's own (the vendor suite's LTS Node and `AS_PUBLISHED`). */
    env?: NodeJS.ProcessEnv;
    /** Overrides for the case (plain Crawlee's storage variant). */
    caseOverrides?: Partial<CrawlerCase>;
    /** Overrides for the shop it crawls (the failures suite's failing shop). */
    shopOverrides?: ShopOptions;
    /**
     * A process its runs go through (the proxies suite's proxies),
     * started fresh before each run and closed after it.
     */
    sidecar?: () => Promise<Sidecar>;
}

/** A process beside the crawler for one run, its CPU its own. */
export interface Sidecar {
    /** Command-line flags added to the case's (dragnet's `--proxy-tier …`). */
    args: string[];
    /**
     * What it saw over the run, read once the crawler has exited;
     * `cpuSec` is its CPU time, kept out of `others' CPU`.
     */
    report(): Promise<{ cpuSec: number } & Record<string, number>>;
    close(): Promise<void>;
}

const crawlersDir = fileURLToPath(new URL('../crawlers/', import.meta.url));
const scrapy = findScrapy();

export const crawlers = {
    dragnet: { name: 'dragnet', label: 'dragnet', script: `${crawlersDir}dragnet.ts` },
    plainCrawlee: {
        name: 'plain-crawlee',
        label: 'plain Crawlee (default storage)',
        script: `${crawlersDir}plainCrawlee.ts`,
        nodeFlags: AS_PUBLISHED,
    },
    plainCrawleeMemory: {
        name: 'plain-crawlee-memory',
        label: 'plain Crawlee (persistStorage: false)',
        script: `${crawlersDir}plainCrawlee.ts`,
        nodeFlags: AS_PUBLISHED,
        caseOverrides: { persistStorage: false },
    },
    bareLoop: { name: 'bare-loop', label: 'bare loop (undici + cheerio)', script: `${crawlersDir}bareLoop.ts` },
    scrapy: {
        name: 'scrapy',
        label: scrapy ? `Scrapy ${scrapy.version}` : 'Scrapy',
        command: [scrapy?.python ?? 'python3', '-B', `${crawlersDir}scrapy_shop.py`],
        unavailable: scrapy ? undefined : 'Scrapy is not on this machine (apt-get install python3-scrapy)',
    },
} satisfies Record<string, Crawler>;

const warnedUnavailable = new Set<string>();
/** Crawlers left out since the last `takeLeftOut()`, by name, with why. */
let leftOut = new Map<string, string>();

/** The crawlers of `list` that can run here; says once per crawler on stderr why another is left out. */
export function available<C extends Crawler>(list: C[]): C[] {
    return list.filter((crawler) => {
        if (crawler.unavailable === undefined) return true;
        leftOut.set(crawler.name, crawler.unavailable);
        if (!warnedUnavailable.has(crawler.name)) {
            warnedUnavailable.add(crawler.name);
            process.stderr.write(`bench: ${crawler.unavailable}; running without ${crawler.name}\n`);
        }
        return false;
    });
}

/** The crawlers `available` has left out since the last call, with why: what a suite's result is missing. */
export function takeLeftOut(): Array<{ crawler: string; reason: string }> {
    const taken = [...leftOut].map(([crawler, reason]) => ({ crawler, reason }));
    leftOut = new Map();
    return taken;
}

export type RunOutcome =
    | { ok: true; result: CrawlerResult }
    /** The child died or printed no result; `peakRssMb` is the last peak the parent saw in /proc, if any. */
    | { ok: false; error: string; peakRssMb?: number };

/** Seconds a child may run past its own time limit (startup, writing its result) before it is killed. */
const GRACE_SECS = 60;

export async function runCrawler(crawler: Crawler, crawlerCase: CrawlerCase): Promise<RunOutcome> {
    const { child, exit } = startBenchChild({
        command: 'command' in crawler ? crawler.command : tsxCommand(crawler.script, crawler.nodeFlags, crawler.node),
        childCase: { ...crawlerCase, ...crawler.caseOverrides },
        env: crawler.env,
        storageDir: crawlerCase.storageDir,
        killAfterSec: crawlerCase.timeLimitSec + GRACE_SECS,
    });
    // The child reports its own peak RSS; this is only for a child that dies before it can.
    let lastPeakRssMb: number | undefined;
    const rssWatch = setInterval(() => {
        void peakRssOf(child.pid).then((mb) => (lastPeakRssMb = mb ?? lastPeakRssMb));
    }, 500);
    const { code, signal, resultLine, stderrTail } = await exit;
    clearInterval(rssWatch);

    if (code === 0 && resultLine) return { ok: true, result: JSON.parse(resultLine) as CrawlerResult };
    const how = signal ? `killed by ${signal}` : `exit code ${code}`;
    return {
        ok: false,
        error: `${crawler.name} ${how}${stderrTail ? `: ${stderrTail}` : ''}`,
        peakRssMb: lastPeakRssMb,
    };
}

/** VmHWM (the kernel's peak resident set) of a live process, in MB; undefined where /proc is not there. */
async function peakRssOf(pid: number | undefined): Promise<number | undefined> {
    if (pid === undefined) return undefined;
    try {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
        return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
    } catch {
        return undefined;
    }
}
