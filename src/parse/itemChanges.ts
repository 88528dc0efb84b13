/**
 * What changed on a page since the last run, item by item: each item a recrawl stores carries
 * `_change` (`new`, `changed` or `unchanged`), and a changed one `_diff`, the fields that changed
 * with their old and new values. A page's items are matched by their place on the page (its
 * first item with the last run's first), which is exact for the usual page of one record.
 * Fields whose names start with `_` (where the record came from, when it was fetched) are not
 * compared.
 */
import type { Change } from '../store/pageHistory.js';
import type { StoredItem } from '../store/records.js';

export type FieldDiff = Record<string, { old: unknown; new: unknown }>;

export type ChangedItem = StoredItem & { _change: Change; _diff?: FieldDiff };

/** The page's items marked against the ones it had; `previous` undefined: a page the history does not know. */
export function markChanges(
    previous: readonly StoredItem[] | undefined,
    current: readonly StoredItem[],
): ChangedItem[] {
    return current.map((item, index) => {
        const before = previous?.[index];
        if (!before) return { ...item, _change: 'new' };
        const diff = fieldDiff(before, item);
        return diff ? { ...item, _change: 'changed', _diff: diff } : { ...item, _change: 'unchanged' };
    });
}

/** Whether anything a reader of the items would see differs: an item changed, came or went. */
export function pageChanged(previous: readonly StoredItem[] | undefined, marked: readonly ChangedItem[]): boolean {
    return previous?.length !== marked.length || marked.some((item) => item._change !== 'unchanged');
}

function fieldDiff(before: StoredItem, after: StoredItem): FieldDiff | undefined {
    const diff: FieldDiff = {};
    for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
        if (field.startsWith('_')) continue;
        if (JSON.stringify(before[field]) !== JSON.stringify(after[field]))
            diff[field] = { old: before[field], new: after[field] };
    }
    return Object.keys(diff).length > 0 ? diff : undefined;
}
