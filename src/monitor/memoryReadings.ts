/**
 * Crawlee's event manager reads the process's memory every second for the autoscaled pools, and
 * each reading spawns `ps` to add up the process's children (Chromium's processes): a fork of a
 * process of a few hundred MB, ~1.5% of the crawling thread in a CPU profile of an HTTP-only
 * crawl, and a pause of the event loop each second. While the process has no child process,
 * its own RSS is the whole reading, so that is read instead; with a child (a browser), Crawlee's
 * reading as it is.
 */
import { type Configuration, type EventManager, LocalEventManager } from '@crawlee/core';
import type { MemoryInfo } from '@crawlee/utils';

/** LocalEventManager with its memory reading (private in Crawlee's types) in view. */
// biome-ignore lint/plugin/noDoubleCast: the memory reading is private in Crawlee's types
const CrawleeEventManager = LocalEventManager as unknown as new (
    config: Configuration,
) => EventManager & { getMemoryInfo(): Promise<MemoryInfo> };

class EventManagerReadingOwnMemory extends CrawleeEventManager {
    /** What Crawlee's first reading found the machine (or its container) to hold. */
    private totalBytes: number | undefined;

    override async getMemoryInfo(): Promise<MemoryInfo> {
        if (this.totalBytes === undefined || process.getActiveResourcesInfo().includes('ProcessWrap')) {
            const info = await super.getMemoryInfo();
            this.totalBytes = info.totalBytes;
            return info;
        }
        // Crawlee reads only the total and the process figures of this.
        const rss = process.memoryUsage.rss();
        return {
            totalBytes: this.totalBytes,
            freeBytes: this.totalBytes - rss,
            usedBytes: rss,
            mainProcessBytes: rss,
            childProcessesBytes: 0,
        };
    }
}

/** Gives `config` the event manager above; returns it. */
export function readOwnMemoryWithoutChildren(config: Configuration): Configuration {
    config.useEventManager(new EventManagerReadingOwnMemory(config));
    return config;
}
