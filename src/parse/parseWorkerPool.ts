/**
 * The parse workers (see pageParser.ts): worker threads that each load the site module, take pages
 * one message at a time and answer in the order they were sent. The pool times the page each worker
 * has in hand, since route code can hang (a loop whose end condition a page never meets, a regular
 * expression that backtracks for ever); past the limit the page is quarantined as
 * `extractor-timeout` and the worker is ended and replaced — ending a thread is the only way to stop
 * a synchronous loop.
 */
import { Worker } from 'node:worker_threads';
import type { Route } from '../site/site.js';
import { type PageToParse, type ParsedPage, timedOutPage } from './parsePage.js';
import type { ParseReply, ParseRequest, WorkerReady } from './parseWorker.js';

const WORKER_ENTRY = new URL('./parseWorker.ts', import.meta.url).href;
/** Worker threads do not inherit the `--import tsx` hook (Node 20), so each registers it before loading its entry. */
const BOOT =
    `import('tsx/esm/api').then(({ register }) => { register(); return ` +
    `import(require('node:worker_threads').workerData.entry); });`;
/** setTimeout's longest delay (a longer one fires at once): a limit past it is no limit. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Task extends ParseRequest {
    resolve: (parsed: ParsedPage) => void;
    reject: (error: Error) => void;
}

interface PoolWorker {
    thread: Worker;
    /** Its pages in the order sent, which is the order it parses them: the first is the one in hand. */
    pending: Map<number, Task>;
    /** Whether it has loaded the site: its first page's time starts then, not while it boots (~1 s). */
    ready: boolean;
    /** Ends the page in hand at the limit. */
    timer?: NodeJS.Timeout;
    gone: boolean;
}

export class ParseWorkerPool {
    private readonly workers: PoolWorker[] = [];
    private readonly limitMs: number;
    private nextId = 0;
    private closed = false;

    constructor(
        private readonly siteModule: string,
        size: number,
        /** The longest a page's parse may take, in seconds. */
        private readonly limitSecs: number,
    ) {
        this.limitMs = limitSecs * 1000;
        for (let i = 0; i < size; i++) this.workers.push(this.start());
    }

    parse(route: Route, page: PageToParse): Promise<ParsedPage> {
        if (this.closed) return Promise.reject(new Error('the parse workers are closed'));
        return new Promise((resolve, reject) =>
            this.send({ id: this.nextId++, label: route.label, page, resolve, reject }),
        );
    }

    async close(): Promise<void> {
        this.closed = true;
        for (const worker of this.workers) clearTimeout(worker.timer);
        await Promise.all(this.workers.map((worker) => worker.thread.terminate()));
    }

    /** To the least busy worker: pages differ in size, so taking turns would queue behind a big one. */
    private send(task: Task): void {
        const worker = this.workers.reduce((least, candidate) =>
            candidate.pending.size < least.pending.size ? candidate : least,
        );
        worker.pending.set(task.id, task);
        if (worker.pending.size === 1) {
            worker.thread.ref();
            this.watch(worker);
        }
        worker.thread.postMessage({ id: task.id, label: task.label, page: task.page } satisfies ParseRequest);
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
        const worker: PoolWorker = { thread, pending: new Map(), ready: false, gone: false };
        thread.on('message', (message: ParseReply | WorkerReady) => {
            if ('ready' in message) {
                worker.ready = true;
                this.watch(worker);
                return;
            }
            const task = worker.pending.get(message.id);
            worker.pending.delete(message.id);
            if (worker.pending.size === 0) thread.unref();
            this.watch(worker);
            if ('error' in message) task?.reject(new Error(`parse worker: ${message.error}`));
            else task?.resolve(message.parsed);
        });
        thread.on('error', (error) => this.replace(worker, error));
        thread.on('exit', (code) => this.replace(worker, new Error(`parse worker exited with code ${code}`)));
        return worker;
    }

    /** Times the worker's page in hand, from when it could take it up: when the one before it was answered. */
    private watch(worker: PoolWorker): void {
        clearTimeout(worker.timer);
        worker.timer = undefined;
        if (!worker.ready || worker.gone || worker.pending.size === 0 || this.limitMs > MAX_TIMER_MS) return;
        worker.timer = setTimeout(() => this.timedOut(worker), this.limitMs);
    }

    /**
     * The page in hand ran past the limit: it is quarantined as `extractor-timeout`, and the worker,
     * perhaps in a loop that never ends, is ended and replaced. Its waiting pages did nothing wrong:
     * they go to the least busy worker, and their time starts again there.
     */
    private timedOut(worker: PoolWorker): void {
        const [hung, ...waiting] = worker.pending.values();
        this.retire(worker);
        void worker.thread.terminate();
        hung?.resolve(timedOutPage(hung.page, this.limitSecs));
        for (const task of waiting) this.send(task);
    }

    /** A worker died (a crash, out of memory): its pages fail (their requests are retried). */
    private replace(worker: PoolWorker, error: Error): void {
        if (worker.gone) return;
        const tasks = [...worker.pending.values()];
        this.retire(worker);
        for (const task of tasks) task.reject(error);
    }

    /** Takes a worker out of the pool; a new one takes its place unless the pool is closing. */
    private retire(worker: PoolWorker): void {
        worker.gone = true;
        clearTimeout(worker.timer);
        worker.pending.clear();
        if (!this.closed) this.workers.splice(this.workers.indexOf(worker), 1, this.start());
    }
}
