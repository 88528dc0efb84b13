/**
 * What the bench parent and a crawler child say to each other. The parent passes a
 * `CrawlerCase` as JSON in argv[2]; the child runs one crawl and prints one `CrawlerResult`
 * as the last line of its stdout. Nothing else is shared, so a crawler child depends on
 * nothing but the crawler it measures.
 */
import { readFileSync } from 'node:fs';

export interface CrawlerCase {
    /** The shop's origin, `http://127.0.0.1:PORT` (no trailing slash); the crawl starts at `/`. */
    shopUrl: string;
    /** An empty directory the crawl may write to; the parent removes it afterwards. */
    storageDir: string;
    /**
     * The crawler's concurrency ceiling (dragnet's `--max-concurrency`, Crawlee's `maxConcurrency`,
     * Scrapy's `CONCURRENT_REQUESTS`). Plain Crawlee and Scrapy need it; for dragnet, absent means
     * no `--max-concurrency`: the width dragnet chooses itself.
     */
    maxConcurrency?: number;
    /**
     * A file of URLs to start from instead of the shop's `/`, one a line: the listing pages, given up
     * front as a user who knows the site's page-number pattern would (the seed suite). A file, because
     * 20,000 URLs do not fit in an argument (Linux's MAX_ARG_STRLEN is 128 KiB). Plain Crawlee and
     * Scrapy handle each one as a listing page.
     */
    startUrlsFile?: string;
    /** The child stops measuring and exits after this many seconds, reporting `finished: false`. */
    timeLimitSec: number;
    /** Milliseconds between in-flight samples. */
    sampleIntervalMs: number;
    /** plain Crawlee only: Crawlee's `persistStorage` (its default is true). */
    persistStorage?: boolean;
    /** dragnet only: more command-line flags, e.g. `['--request-timeout', '5']`. */
    args?: string[];
    /**
     * dragnet only: `--wire`, with the Chromium on the machine (`findChromium`) to send with when it is
     * not `fast`. Default: neither, so every request goes out on `fast` (Node's undici).
     */
    wire?: 'fast' | 'chrome' | 'auto';
}

export interface CrawlerResult {
    /**
     * HTTP responses the crawler received, counted at its HTTP client the same way for every crawler;
     * when its requests are not sent by this process's clients (dragnet's chrome wire: Chromium sends
     * them), the pages the crawler counted itself (`pagesCountedBy: 'crawler'`).
     */
    pages: number;
    /** Where `pages` was counted. Absent: `client`. */
    pagesCountedBy?: 'client' | 'crawler';
    /** Pages the crawler itself counts as handled (dragnet: requests succeeded; Crawlee: requests finished). */
    crawlerPages: number;
    /** Items the crawler stored (read after the timed part; -1 when the run was cut short). */
    items: number;
    /** False when the time limit cut the crawl short. */
    finished: boolean;
    /** Wall time of the crawl call, from building the crawler to its promise settling (storage flushed). */
    durationSec: number;
    pagesPerSec: number;
    /**
     * Responses completed in the middle 60% of the run's wall time, per second of that window;
     * null when the pages were not counted at the client (no times to count them by).
     */
    steadyPagesPerSec: number | null;
    /** `process.resourceUsage().maxRSS`, in MB; the tree's when `tree` is set. */
    peakRssMb: number;
    /** The same just before the crawl started: what loading the code took (tsx, Crawlee, the crawler's modules). */
    startRssMb: number;
    /** CPU seconds (user + system) this process spent in the timed part; the tree's when `tree` is set. */
    cpuSec: number;
    /** Share of all the machine's cores busy during the timed part, whoever used them (from os.cpus()). */
    machineCpuBusy: number;
    /**
     * Share of the steady window the crawling thread's event loop was busy (Node's
     * `performance.eventLoopUtilization()`): near 1, that thread is what limits the crawl, whatever
     * the pool allows; work in worker threads is not in it.
     */
    threadBusy: number;
    /** Epoch milliseconds of the start and end of the timed part, so the parent can line up its own samples. */
    startedAtMs: number;
    endedAtMs: number;
    /**
     * Requests open at the crawler's HTTP client, one sample per `sampleIntervalMs` from the start;
     * null when its requests are not sent by this process's clients.
     */
    inflightSamples: number[] | null;
    /** plain Crawlee only: `crawler.autoscaledPool.currentConcurrency`, sampled with the above. */
    poolConcurrencySamples?: number[];
    /** plain Crawlee only: `crawler.autoscaledPool.desiredConcurrency`, sampled with the above. */
    poolDesiredSamples?: number[];
    /** dragnet only, when the crawl ran to its end: what its run summary says failed, and how requests left. */
    dragnet?: DragnetSummaryFigures;
    /**
     * Set by the bench parent (lib/runCrawler.ts), never by the child, for a crawler measured as its
     * process tree: `cpuSec` and `peakRssMb` are then the tree's, and this says what they are made of.
     */
    tree?: TreeFigures;
}

/**
 * A crawler's process tree over its timed part: its own process and every process under it (dragnet's
 * Chromium, with the chrome wire), but tsx's esbuild service, which no crawler's own figures count.
 */
export interface TreeFigures {
    /** The crawler's own process: its CPU in the timed part (the child's `process.cpuUsage()`) and peak RSS. */
    ownCpuSec: number;
    ownPeakRssMb: number;
    /**
     * The processes under it: their CPU from the last sample before the timed part to each one's
     * last sample (/proc, every `sampleIntervalMs`), so what one spent in its last interval before
     * exiting is missed, and one that lived less than an interval may be missed whole.
     */
    spawnedCpuSec: number;
    /** The highest sum of their VmRSS in one sample. */
    spawnedPeakRssMb: number;
    /**
     * The highest sum of Pss over the tree in one sample: shared pages (Chromium's binary, mapped by
     * each of its processes) split between the processes, where the RSS sum counts them in each.
     */
    peakPssMb: number;
    /** Processes seen in the tree (the crawler's own included), and the most at once. */
    processesSeen: number;
    peakProcesses: number;
    /** Samples taken (one per `sampleIntervalMs`). */
    samples: number;
}

/** A few figures of dragnet's run summary (src/vocabulary/report.ts), copied as they are. */
export interface DragnetSummaryFigures {
    retried: number;
    deadLettered: number;
    deadLetterByReason: Record<string, number>;
    errorsByClass: Record<string, number>;
    /** `proxies.tiers`: requests sent by each tier, and what came of them (ok, blocked, limited, exitFaults). */
    proxyTiers: Array<{
        name: string;
        requests: number;
        ok: number;
        blocked: number;
        limited: number;
        exitFaults: number;
    }>;
    /** `proxies.exits`: the same per exit (`host:port` of a proxy, or `direct`). */
    proxyExits: Array<{
        tier: string;
        name: string;
        requests: number;
        ok: number;
        exitFaults: number;
        breakerOpened: number;
    }>;
    tierMoves: number;
    probes: number;
    /** `recrawl`, when the run recrawled the site (a finished run in the same storage dir): what it found. */
    recrawl?: {
        run: number;
        items: { new: number; changed: number; unchanged: number; removed: number };
        unchangedPages: { notModified: number; identicalPayload: number };
    };
}

/** The case a child was started with (argv[2]). */
export function readCase(): CrawlerCase {
    const json = process.argv[2];
    if (!json) throw new Error('usage: crawler child <case as JSON>');
    return JSON.parse(json) as CrawlerCase;
}

/** The URLs a crawl starts from: the case's `startUrlsFile`, one a line, or the shop's `/`. */
export function startUrlsOf(crawlerCase: CrawlerCase): string[] {
    if (crawlerCase.startUrlsFile === undefined) return [`${crawlerCase.shopUrl}/`];
    return readFileSync(crawlerCase.startUrlsFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
}

/** Prints the result as the last stdout line and exits once it is written (the crawl may still hold timers). */
export function reportAndExit(result: CrawlerResult): void {
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}
