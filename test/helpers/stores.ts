/** Reading what a run stored, the way any reader outside the run would: through Crawlee's Dataset API. */
import { Dataset } from '@crawlee/core';
import { openStorage } from '../../src/store/datasets.js';

/** Every record of a dataset in a storage dir, in order. */
export async function readDataset<T extends object = Record<string, unknown>>(
    storageDir: string,
    name: string,
): Promise<T[]> {
    const { config, storage } = openStorage(storageDir);
    try {
        const dataset = await Dataset.open(name, { config });
        return (await dataset.getData({ limit: Number.MAX_SAFE_INTEGER })).items as T[];
    } finally {
        await storage.close();
    }
}
