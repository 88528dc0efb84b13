/**
 * What a bench suite is. A suite is a file `bench/<name>.ts` that default-exports
 * `defineSuite({...})`; `npm run bench -- <name>` runs it, and it runs with no names given
 * when `runByDefault` is set. Adding a suite is adding that file.
 */
import type { PageWeight } from '../../src/demo/dressing.js';
import type { ResultCase as CaseReport } from '../../src/authoring/benchmarkResults.js';
import type { Crawler } from './runCrawler.js';

export interface BenchOptions {
    /** `--runs`: runs of each crawler (or each measurement) per case. Default: 3. */
    runs: number;
    /** `--products`: shop sizes to run, when given; otherwise the suite's own defaults. */
    products?: number[];
    /** `--large`: the suite's large sizes (those the figures are for) instead of its quick defaults. */
    large: boolean;
    /**
     * `--page-weight`: the shop's page weight in the crawl suites (cpu, latency, failures, proxies, recrawl): `real`,
     * a real store's pages (~15 KB products, ~24 KB listings, 180+ links each), or `light`, the small
     * pages of the test shop. Default: `real`.
     */
    pageWeight: PageWeight;
    /**
     * `--against REV`: dragnet at that commit, run beside the working
     * tree's (lib/against.ts); the cpu and latency suites use it.
     */
    against?: Crawler;
    /**
     * `--dragnet-only`: the cpu and latency suites run dragnet (and `--against`)
     * without the plain Crawlee and Scrapy baselines. Default: false.
     */
    dragnetOnly: boolean;
    /**
     * `--scale X`: the seed suite's size as a share of its full one (400,000 products, 20,000
     * listing pages); 0.1 is a tenth. Default: 1.
     */
    scale: number;
    /**
     * `--max-concurrency N`: the seed suite's ceiling for dragnet. Default: none, so dragnet
     * runs with the width it chooses itself.
     */
    maxConcurrency?: number;
    /** `--baselines`: the seed suite runs Scrapy and plain Crawlee at any scale, not only up to 0.1. Default: false. */
    baselines: boolean;
}

export type { ResultCase as CaseReport, TableRow } from '../../src/authoring/benchmarkResults.js';

export interface Suite {
    /** One line for `--help`. */
    description: string;
    /** Part of `npm run bench` with no suite named; keep such suites to a minute or two at their defaults. */
    runByDefault: boolean;
    /**
     * A result kept beside the suite's main one: `results/<suite>@<variant>.json`, with a block of its
     * own on the benchmarks page (the seed suite's `--scale`, so its full run and the tenth's side by
     * side are both kept). Undefined: the main one. Default: always the main one.
     */
    variant?(options: BenchOptions): string | undefined;
    /** Its `--runs` when none is given, for a suite whose run is long. Default: 3. */
    defaultRuns?: number;
    /** Runs every case, calling `report` once per case as soon as it is done. */
    run(options: BenchOptions, report: (result: CaseReport) => void): Promise<void>;
}

export function defineSuite(suite: Suite): Suite {
    return suite;
}
