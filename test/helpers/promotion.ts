/**
 * What V8 promoted to the old generation per page in a loop of test/parse/fixtures/promotionLoop.ts
 * (see there for the modes): the child runs with `--trace-gc-nvp`, and the `promoted=` bytes of its
 * collections between `loop starts` and `loop ends` are summed. A page kept alive across two
 * young-generation collections is promoted, so this tells what a crawl keeps of each page.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const loop = fileURLToPath(new URL('../parse/fixtures/promotionLoop.ts', import.meta.url));
const PAGES = 1_500;

export async function promotedPerPage(mode: string): Promise<number> {
    const { stdout } = await promisify(execFile)(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', loop, mode, String(PAGES)], { maxBuffer: 64 * 1024 * 1024 });
    const lines = stdout.split('\n');
    const inLoop = lines.slice(lines.indexOf('loop starts'), lines.findIndex((line) => line.startsWith('loop ends')));
    assert.ok(inLoop.length > 1, `the child ran its loop: ${stdout.slice(-300)}`);
    const promoted = inLoop.map((line) => Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0)).reduce((sum, bytes) => sum + bytes, 0);
    return promoted / PAGES;
}
