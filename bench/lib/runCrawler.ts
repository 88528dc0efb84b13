/**
 * The crawlers under comparison, and how one run of one of them is started: a child process
 * of its own (so its peak RSS is its own, and the shop's CPU and memory stay in the parent),
 * given its case as JSON, reporting one JSON line.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ShopOptions } from '../../src/demo/shop.js';
import type { CrawlerCase, CrawlerResult } from '../crawlers/protocol.js';
import { AS_PUBLISHED } from './asPublished.js';
import { findScrapy } from './scrapy.js';

/**
 * A crawler under comparison. Its child is a TypeScript file (`script`, run as `node --import tsx
 * <script>`) or any other command (`command`: Scrapy's `python3 -B <script>`); either is given the
 * case as JSON as its last argument.
 */
export type Crawler = CrawlerDescription & ({ script: string } | { command: string[] });

interface CrawlerDescription {
    /** Key in the JSON output. */
    name: string;
    /** How the table names it. */
    label: string;
    /** Why it cannot run on this machine, when it cannot: suites leave it out (see `available`). */
    unavailable?: string;
    /** Node flags before the script's (plain Crawlee's AS_PUBLISHED). */
    nodeFlags?: string[];
    /** Overrides for the case (plain Crawlee's storage variant). */
    caseOverrides?: Partial<CrawlerCase>;
    /** Overrides for the shop it crawls (the failures suite's failing shop). */
    shopOverrides?: ShopOptions;
    /** A process its runs go through (the proxies suite's proxies), started fresh before each run and closed after it. */
    sidecar?: () => Promise<Sidecar>;
}

/** A process beside the crawler for one run, its CPU its own. */
export interface Sidecar {
    /** Command-line flags added to the case's (dragnet's `--proxy-tier …`). */
    args: string[];
    /** What it saw over the run, read once the crawler has exited; `cpuSec` is its CPU time, kept out of `others' CPU`. */
    report(): Promise<{ cpuSec: number } & Record<string, number>>;
    close(): Promise<void>;
}

const crawlersDir = fileURLToPath(new URL('../crawlers/', import.meta.url));
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const scrapy = findScrapy();

export const crawlers = {
    dragnet: { name: 'dragnet', label: 'dragnet', script: `${crawlersDir}dragnet.ts` },
    plainCrawlee: { name: 'plain-crawlee', label: 'plain Crawlee (default storage)', script: `${crawlersDir}plainCrawlee.ts`, nodeFlags: AS_PUBLISHED },
    plainCrawleeMemory: {
        name: 'plain-crawlee-memory',
        label: 'plain Crawlee (persistStorage: false)',
        script: `${crawlersDir}plainCrawlee.ts`,
        nodeFlags: AS_PUBLISHED,
        caseOverrides: { persistStorage: false },
    },
    scrapy: {
        name: 'scrapy',
        label: scrapy ? `Scrapy ${scrapy.version}` : 'Scrapy',
        command: [scrapy?.python ?? 'python3', '-B', `${crawlersDir}scrapy_shop.py`],
        unavailable: scrapy ? undefined : 'Scrapy is not on this machine (apt-get install python3-scrapy)',
    },
} satisfies Record<string, Crawler>;

const warnedUnavailable = new Set<string>();

/** The crawlers of `list` that can run here; says once per crawler on stderr why another is left out. */
export function available<C extends Crawler>(list: C[]): C[] {
    return list.filter((crawler) => {
        if (crawler.unavailable === undefined) return true;
        if (!warnedUnavailable.has(crawler.name)) {
            warnedUnavailable.add(crawler.name);
            process.stderr.write(`bench: ${crawler.unavailable}; running without ${crawler.name}\n`);
        }
        return false;
    });
}

export type RunOutcome =
    | { ok: true; result: CrawlerResult }
    /** The child died or printed no result; `peakRssMb` is the last peak the parent saw in /proc, if any. */
    | { ok: false; error: string; peakRssMb?: number };

/** Seconds a child may run past its own time limit (startup, writing its result) before it is killed. */
const GRACE_SECS = 60;

export async function runCrawler(crawler: Crawler, crawlerCase: CrawlerCase): Promise<RunOutcome> {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CRAWLEE_')));
    const [command, ...args] = 'command' in crawler ? crawler.command : [process.execPath, ...(crawler.nodeFlags ?? []), '--import', 'tsx', crawler.script];
    const child = spawn(command!, [...args, JSON.stringify({ ...crawlerCase, ...crawler.caseOverrides })], {
        cwd: projectRoot,
        // Crawlee's global configuration writes under CRAWLEE_STORAGE_DIR, in either crawler.
        env: { ...env, CRAWLEE_STORAGE_DIR: crawlerCase.storageDir },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));

    // The child reports its own peak RSS; this is only for a child that dies before it can.
    let lastPeakRssMb: number | undefined;
    const rssWatch = setInterval(() => {
        void peakRssOf(child.pid).then((mb) => (lastPeakRssMb = mb ?? lastPeakRssMb));
    }, 500);
    const killTimer = setTimeout(() => child.kill('SIGKILL'), (crawlerCase.timeLimitSec + GRACE_SECS) * 1000);

    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        child.once('close', (code, signal) => resolve({ code, signal }));
    });
    clearInterval(rssWatch);
    clearTimeout(killTimer);

    const lastLine = stdout.trim().split('\n').at(-1) ?? '';
    if (exit.code === 0 && lastLine.startsWith('{')) {
        return { ok: true, result: JSON.parse(lastLine) as CrawlerResult };
    }
    const how = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
    const detail = stderr.trim().split('\n').slice(-5).join(' | ');
    return { ok: false, error: `${crawler.name} ${how}${detail ? `: ${detail}` : ''}`, peakRssMb: lastPeakRssMb };
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
