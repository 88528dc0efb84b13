/**
 * The crawlers under comparison, and how one run of one of them is started: a child process
 * of its own (so its peak RSS is its own, and the shop's CPU and memory stay in the parent),
 * given its case as JSON, reporting one JSON line. The child's process tree is sampled from /proc
 * while it runs (processTree.ts): for the last peak of a child that dies, and for the figures of a
 * crawler measured as its tree (`measuredAsTree`).
 */
import { fileURLToPath } from 'node:url';
import type { ShopOptions } from '../../src/demo/shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import type { CrawlerCase, CrawlerResult, TreeFigures } from '../crawlers/protocol.js';
import { AS_PUBLISHED } from './asPublished.js';
import { startBenchChild, tsxCommand } from './benchChild.js';
import { type ProcessInfo, sampleTree, type TreeSample, type TreeSampler } from './processTree.js';
import { findScrapy } from './scrapy.js';
import { round } from './stats.js';

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
     * Its `cpuSec` and `peakRssMb` are those of its process tree, its own process and every process it
     * starts (dragnet's Chromium, with the chrome wire), as `CrawlerResult.tree` details them.
     * Otherwise they are its own process's, as the child measured them.
     */
    measuredAsTree?: boolean;
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
const chromium = findChromium();

export const crawlers = {
    dragnet: { name: 'dragnet', label: 'dragnet', script: `${crawlersDir}dragnet.ts`, measuredAsTree: true },
    /** Every request sent by the machine's Chromium (the browser's own handshake), which the crawl starts. */
    dragnetChrome: {
        name: 'dragnet-chrome',
        label: 'dragnet --wire chrome',
        script: `${crawlersDir}dragnet.ts`,
        measuredAsTree: true,
        caseOverrides: { wire: 'chrome' },
        unavailable: chromium ? undefined : 'no Chromium on this machine (apt-get install chromium, or CHROMIUM_PATH)',
    },
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
/**
 * How often a tree's Pss is read: a slow-moving figure, and the dearest to read (a tree of 60
 * Chromium processes at every 250 ms sample would cost the bench's process ~a third of a core).
 */
const PSS_INTERVAL_MS = 2_000;

export async function runCrawler(crawler: Crawler, crawlerCase: CrawlerCase): Promise<RunOutcome> {
    const { child, exit } = startBenchChild({
        command: 'command' in crawler ? crawler.command : tsxCommand(crawler.script, crawler.nodeFlags, crawler.node),
        childCase: { ...crawlerCase, ...crawler.caseOverrides },
        env: crawler.env,
        storageDir: crawlerCase.storageDir,
        killAfterSec: crawlerCase.timeLimitSec + GRACE_SECS,
    });
    const root = child.pid;
    const sampler =
        root === undefined
            ? undefined
            : sampleTree({
                  pid: root,
                  intervalMs: crawlerCase.sampleIntervalMs,
                  pss: crawler.measuredAsTree,
                  pssEvery: Math.ceil(PSS_INTERVAL_MS / crawlerCase.sampleIntervalMs),
                  group: treeGroup,
              });
    const { code, signal, resultLine, stderrTail } = await exit;
    const samples = (await sampler?.stop()) ?? [];

    if (code === 0 && resultLine) {
        const result = JSON.parse(resultLine) as CrawlerResult;
        return { ok: true, result: crawler.measuredAsTree && sampler ? asTree(result, samples, sampler) : result };
    }
    const how = signal ? `killed by ${signal}` : `exit code ${code}`;
    // The child reports its own peak RSS; this is only for a child that dies before it can.
    const lastPeak = sampler?.peakHwmMb().find(({ pid }) => pid === root)?.hwmMb;
    return {
        ok: false,
        error: `${crawler.name} ${how}${stderrTail ? `: ${stderrTail}` : ''}`,
        peakRssMb: lastPeak === undefined ? undefined : Math.round(lastPeak),
    };
}

/**
 * The crawler's own process, tsx's esbuild service (in no crawler's own figures, so in none
 * of the tree's) and every other process under it: what it spawned (dragnet's Chromium).
 */
function treeGroup(process: ProcessInfo, root: number): 'own' | 'esbuild' | 'spawned' {
    return process.pid === root ? 'own' : process.comm === 'esbuild' ? 'esbuild' : 'spawned';
}

/**
 * The child's result with its tree's CPU and peak RSS. The child's own CPU is its exact figure for the
 * timed part; the spawned processes' is what the samples saw them use from the last sample before
 * the timed part to their last. The tree's peak RSS is the highest sum of its own and the spawned
 * processes' VmRSS in one sample, and never below the peak the child reported for itself.
 */
function asTree(result: CrawlerResult, samples: TreeSample[], sampler: TreeSampler): CrawlerResult {
    const spawnedCpu = (sample: TreeSample | undefined) => sample?.cpuSecByGroup.spawned ?? 0;
    const before = samples.filter(({ atMs }) => atMs <= result.startedAtMs).at(-1);
    const spawnedCpuSec = Math.max(0, spawnedCpu(samples.at(-1)) - spawnedCpu(before));
    const highest = (value: (sample: TreeSample) => number) => Math.max(0, ...samples.map(value));
    const rssOf = (sample: TreeSample, group: string) => sample.rssMbByGroup[group] ?? 0;
    const pssOf = (sample: TreeSample, group: string) => sample.pssMbByGroup?.[group] ?? 0;
    const tree: TreeFigures = {
        ownCpuSec: result.cpuSec,
        ownPeakRssMb: result.peakRssMb,
        spawnedCpuSec: round(spawnedCpuSec, 2),
        spawnedPeakRssMb: Math.round(highest((sample) => rssOf(sample, 'spawned'))),
        peakPssMb: Math.round(highest((sample) => pssOf(sample, 'own') + pssOf(sample, 'spawned'))),
        processesSeen: sampler.peakHwmMb().filter(({ comm }) => comm !== 'esbuild').length,
        peakProcesses: highest((sample) => sample.processes - (sample.processesByGroup.esbuild ?? 0)),
        samples: samples.length,
    };
    return {
        ...result,
        cpuSec: round(result.cpuSec + spawnedCpuSec, 2),
        peakRssMb: Math.round(
            Math.max(
                result.peakRssMb,
                highest((sample) => rssOf(sample, 'own') + rssOf(sample, 'spawned')),
            ),
        ),
        tree,
    };
}
