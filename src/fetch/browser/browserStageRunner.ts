/**
 * Runs the browser stage beside the HTTP stage, so escalated pages are rendered (and judged)
 * while the cheap crawl goes on, not after it. The browser starts only once a page needs it;
 * when no working browser is there, those pages go to dead-letter instead, with one message.
 */
import type { PlaywrightCrawler } from '@crawlee/playwright';
import type { Logger } from 'pino';
import type { Outcomes } from '../../store/outcomes.js';
import type { FrontierQueue } from '../../vocabulary/queue.js';
import { browserProblem } from './chromium.js';
import { giveUp } from '../failureHandlers.js';

export interface BrowserStageRunnerOptions {
    queue: FrontierQueue;
    /**
     * Builds the browser stage (a keep-alive PlaywrightCrawler) for this Chromium. Asynchronous, so
     * that the stage's code (browserStage.ts, Playwright) is loaded only now, when a page needs it.
     */
    createStage: (executablePath: string) => Promise<PlaywrightCrawler>;
    chromiumPath: string | undefined;
    outcomes: Outcomes;
    log: Logger;
    /** How often to look at the browser queue. Default: 250 ms. */
    pollMillis?: number;
}

export class BrowserStageRunner {
    private problem: Promise<string | undefined> | undefined;
    private crawler: PlaywrightCrawler | undefined;
    /** Creating the stage (loading its code first); set until `finish()`, so it is created once per round. */
    private starting: Promise<void> | undefined;
    /** The stage's run; a failure is kept for `finish()` to throw, not left unhandled. */
    private running: Promise<unknown> | undefined;
    private failure: unknown;
    private announced = false;
    private stopped = false;
    private watcher: NodeJS.Timeout | undefined;
    private readonly pollMillis: number;

    constructor(private readonly options: BrowserStageRunnerOptions) {
        this.pollMillis = options.pollMillis ?? 250;
    }

    /** Starts watching the browser queue; the stage starts when the queue first has work. */
    start(): void {
        this.watcher = setInterval(() => void this.startIfNeeded(), this.pollMillis);
    }

    /** Stops the stage without waiting for its queue: pages open now finish, the rest stays queued. */
    stop(): void {
        this.stopped = true;
        clearInterval(this.watcher);
        this.crawler?.stop('stopping: no new pages');
    }

    /**
     * Waits until the browser queue is drained (by rendering or by dead-lettering), or `stop()`, then stops the stage.
     */
    async finish(): Promise<void> {
        clearInterval(this.watcher);
        if (!this.stopped) await this.startIfNeeded();
        await this.starting;
        this.starting = undefined;
        if (this.crawler) {
            while (!this.failure && !this.stopped && !(await this.options.queue.isFinished())) {
                await new Promise((resolve) => setTimeout(resolve, this.pollMillis));
            }
            this.crawler.stop('the browser queue is drained');
            await this.running;
            this.crawler = undefined;
            this.running = undefined;
        }
        if (this.failure) throw this.failure;
        const problem = await this.problem;
        if (problem) await this.deadLetterQueued(problem);
    }

    /** Whether a browser was found and starts (undefined until a page needed one). */
    async available(): Promise<boolean | undefined> {
        return this.problem && (await this.problem) === undefined;
    }

    private async startIfNeeded(): Promise<void> {
        if (this.crawler || this.stopped || (await this.options.queue.isEmpty())) return;
        this.problem ??= browserProblem(this.options.chromiumPath);
        const problem = await this.problem;
        if (problem) return this.deadLetterQueued(problem);
        const { chromiumPath } = this.options;
        // browserProblem() names the missing path as the problem, so a path is there by now.
        if (chromiumPath === undefined) throw new Error('no Chromium path, and no problem found with it');
        this.starting ??= this.options
            .createStage(chromiumPath)
            .then((crawler) => {
                // Stopped while its code loaded: the stage never runs, so nothing else would end what
                // it holds (its egress proxy listens, and would keep the process from exiting).
                if (this.stopped) return crawler.teardown();
                this.crawler = crawler;
                this.running = crawler.run().catch((error: unknown) => {
                    this.failure = error;
                });
            })
            .catch((error: unknown) => {
                this.failure = error;
            });
        await this.starting;
    }

    private async deadLetterQueued(problem: string): Promise<void> {
        if (!this.announced && !(await this.options.queue.isEmpty())) {
            this.announced = true;
            this.options.log.error(`cannot render pages: ${problem}. They go to dead-letter as renderer-unavailable.`);
        }
        await deadLetterUnrendered(this.options.queue, this.options.outcomes, problem);
    }
}

/**
 * Without a browser, the pages waiting for one cannot be done in this run: each goes to
 * dead-letter as `renderer-unavailable`, to be re-queued once a browser is installed.
 */
async function deadLetterUnrendered(queue: FrontierQueue, outcomes: Outcomes, problem: string): Promise<void> {
    for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
        await giveUp(queue, outcomes, request, {
            failureClass: 'permanent',
            reason: 'renderer-unavailable',
            error: problem,
            attempts: 0,
            stage: 'browser',
        });
        await queue.markRequestHandled(request);
    }
}
