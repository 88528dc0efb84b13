/**
 * A parse worker (a worker thread started by parseWorkerPool.ts): loads the site module it is
 * given, says it is ready, then parses the pages it is sent with their routes, in order, one
 * message each way per page.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Site } from '../site/site.js';
import { type PageToParse, type ParsedPage, parsePage } from './parsePage.js';

export interface ParseRequest {
    id: number;
    /** The label of the route that handles the page: the worker's own copy of the route parses it. */
    label: string;
    page: PageToParse;
}

export type ParseReply = { id: number; parsed: ParsedPage } | { id: number; error: string };

/** Sent once the site is loaded: the pool starts timing pages from then. */
export type WorkerReady = { ready: true };

if (!parentPort) throw new Error('parseWorker.ts runs only as a worker thread (parseWorkerPool.ts starts it)');
const port = parentPort;
const { siteModule } = workerData as { siteModule: string };
const site = ((await import(siteModule)) as { default: Site }).default;

port.on('message', ({ id, label, page }: ParseRequest) => {
    let reply: ParseReply;
    try {
        const route = site.routes.get(label);
        if (!route) throw new Error(`no route "${label}" in site ${site.name} (${siteModule})`);
        reply = { id, parsed: parsePage(route, page) };
    } catch (error) {
        reply = { id, error: error instanceof Error ? error.message : String(error) };
    }
    try {
        port.postMessage(reply);
    } catch (error) {
        // Records are plain data by now (quality/extractorOutput.ts), but other route code may still
        // leave what cannot be cloned (a link rule that yields objects).
        port.postMessage({
            id,
            error: `the page's records cannot leave the parse worker: ${(error as Error).message}`,
        });
    }
});
port.postMessage({ ready: true } satisfies WorkerReady);
