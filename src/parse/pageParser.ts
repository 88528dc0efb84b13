/**
 * Where pages are parsed. A crawl's fetching, queueing and storing run on one Node thread; parsing a
 * page and running its route's extractor is about a fifth of that thread's CPU per page (a profile
 * of the bench's latency suite), and it needs nothing but the HTML. So on a machine with cores to
 * spare it runs in parse workers — worker threads that load the site module themselves — and the
 * crawling thread keeps its CPU for the requests in flight. A site defined in place rather than
 * loaded from a module (tests) is parsed in the crawling thread, as is everything when `workers`
 * is 0.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Route, Site } from '../site.js';
import { type PageToParse, type ParsedPage, parsePage } from './parsePage.js';
import type { ParseReply, ParseRequest } from './parseWorker.js';

export interface PageParser {
    parse(route: Route, page: PageToParse): Promise<ParsedPage>;
    /** Stops the workers; pages still being parsed fail. */
    close(): Promise<void>;
}

/**
 * Parse workers by default: one per core beyond two, at most 4. The first two cores are the
 * crawling thread's and everything else's (libuv's threads, SQLite, Chromium, other processes). On
 * a 2-core machine a worker gave ~8% more pages per second on the bench's latency suite (332 against
 * 306) but fewer on its CPU suite, where it took peak memory past 300 MB (313 MB against 267 at
 * 10,000 products), so there are none.
 */
export function defaultParseWorkers(): number {
    return Math.min(4, Math.max(0, availableParallelism() - 2));
}

export function createPageParser(site: Site, workers: number): PageParser {
    return workers > 0 && site.moduleUrl ? new ParseWorkerPool(site.moduleUrl, workers) : IN_THREAD;
}

const IN_THREAD: PageParser = {
    parse: async (route, page) => parsePage(route, page),
    close: async () => undefined,
};

const WORKER_ENTRY = new URL('./parseWorker.ts', import.meta.url).href;
/** Worker threads do not inherit the `--import tsx` hook (Node 20), so each registers it before loading its entry. */
const BOOT = `import('tsx/esm/api').then(({ register }) => { register(); return import(require('node:worker_threads').workerData.entry); });`;

interface PoolWorker {
    thread: Worker;
    pending: Map<number, { resolve: (parsed: ParsedPage) => void; reject: (error: Error) => void }>;
    gone: boolean;
}

class ParseWorkerPool implements PageParser {
    private readonly workers: PoolWorker[] = [];
    private nextId = 0;
    private closed = false;

    constructor(
        private readonly siteModule: string,
        size: number,
    ) {
        for (let i = 0; i < size; i++) this.workers.push(this.start());
    }

    parse(route: Route, page: PageToParse): Promise<ParsedPage> {
        if (this.closed) return Promise.reject(new Error('the parse workers are closed'));
        // The least busy worker: pages differ in size, so taking turns would queue behind a big one.
        const worker = this.workers.reduce((least, candidate) => (candidate.pending.size < least.pending.size ? candidate : least));
        const id = this.nextId++;
        return new Promise((resolve, reject) => {
            if (worker.pending.size === 0) worker.thread.ref();
            worker.pending.set(id, { resolve, reject });
            worker.thread.postMessage({ id, label: route.label, page } satisfies ParseRequest);
        });
    }

    async close(): Promise<void> {
        this.closed = true;
        await Promise.all(this.workers.map((worker) => worker.thread.terminate()));
    }

    private start(): PoolWorker {
        const thread = new Worker(BOOT, {
            eval: true,
            workerData: { entry: WORKER_ENTRY, siteModule: this.siteModule },
            // A worker holds one page's DOM at a time: a small young generation is enough, and keeps
            // ~30 MB of memory that V8's default (16 MB semi-spaces) would take (bench cpu suite).
            resourceLimits: { maxYoungGenerationSizeMb: 4 },
        });
        // A worker keeps the process alive only while it has pages to parse.
        thread.unref();
        const worker: PoolWorker = { thread, pending: new Map(), gone: false };
        thread.on('message', (reply: ParseReply) => {
            const task = worker.pending.get(reply.id);
            worker.pending.delete(reply.id);
            if (worker.pending.size === 0) thread.unref();
            if ('error' in reply) task?.reject(new Error(`parse worker: ${reply.error}`));
            else task?.resolve(reply.parsed);
        });
        thread.on('error', (error) => this.replace(worker, error));
        thread.on('exit', (code) => this.replace(worker, new Error(`parse worker exited with code ${code}`)));
        return worker;
    }

    /** A worker died (a crash, out of memory): its pages fail, and a new one takes its place. */
    private replace(worker: PoolWorker, error: Error): void {
        if (worker.gone) return;
        worker.gone = true;
        for (const task of worker.pending.values()) task.reject(error);
        worker.pending.clear();
        if (this.closed) return;
        this.workers.splice(this.workers.indexOf(worker), 1, this.start());
    }
}
