/** A directory of the test's own under the system's temp dir, removed when the test ends. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

export async function tempDir(t: TestContext, prefix: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), `dragnet-${prefix}-`));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}
