/**
 * Crawlee's statistics without secrets: its crawlers save them to the key-value store
 * (`SDK_CRAWLER_STATISTICS_<n>`, a file in the storage dir), and their error tracker keeps each
 * kind of error by the first line of its message, which may name a proxy or a database with its
 * password. Those records are saved with URL passwords masked (vocabulary/redact.ts); every other
 * record — the session pool's cookies included, which a resumed run needs — is kept as given.
 */
import type { KeyValueStoreClient, KeyValueStoreRecord } from '@crawlee/types';
import { scrubUrls } from '../../vocabulary/redact.js';

const STATISTICS = /^SDK_CRAWLER_STATISTICS_/;

/** `client`, saving Crawlee's statistics records scrubbed. */
export function scrubbingStatistics(client: KeyValueStoreClient): KeyValueStoreClient {
    const setRecord = (record: KeyValueStoreRecord, options?: Parameters<KeyValueStoreClient['setRecord']>[1]) =>
        // Crawlee hands the record over as its JSON text: only the
        // URL passwords are masked, which leaves the JSON whole.
        client.setRecord(
            STATISTICS.test(record.key) && typeof record.value === 'string'
                ? { ...record, value: scrubUrls(record.value) }
                : record,
            options,
        );
    return new Proxy(client, {
        get(target, property) {
            if (property === 'setRecord') return setRecord;
            const value: unknown = Reflect.get(target, property, target);
            return typeof value === 'function' ? value.bind(target) : value;
        },
    });
}
