/**
 * The change log of a site's latest run (`npm run export -- --changes`): the items that are new or
 * changed, then the items of the pages the run found gone, each saying so in `_change`. Unchanged
 * items are left out. A site's first run has nothing to compare with: every item is new.
 */
import type { PageHistory, SeriesRun } from './pageHistory.js';
import type { StoredItem } from './records.js';

const REPORTED = new Set(['new', 'changed']);

export async function* changeLog(
    items: AsyncIterable<Record<string, unknown>>,
    history: Pick<PageHistory, 'removed'>,
    series: SeriesRun,
): AsyncGenerator<Record<string, unknown>> {
    for await (const item of items) {
        if (series.mode === 'first') yield { ...item, _change: 'new' };
        else if (REPORTED.has(item._change as string)) yield item;
    }
    if (series.mode === 'recrawl') yield* history.removed(series.run) as AsyncIterable<StoredItem>;
}
