/**
 * `--against REV`: dragnet as it was at another commit, crawled in the same invocation as the
 * working tree, so a change's cost is measured on the same machine at the same time. The commit is
 * checked out in a temporary git worktree that shares this tree's node_modules (so a commit whose
 * dependencies differ from the working tree's is not comparable this way); its own
 * bench/crawlers/dragnet.ts runs it, in the child process protocol of the commit's own day.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Crawler } from './runCrawler.js';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface AgainstCheckout {
    crawler: Crawler;
    /** Removes the worktree. */
    remove(): void;
}

export function checkOutAgainst(rev: string): AgainstCheckout {
    const commit = execFileSync('git', ['rev-parse', '--short', `${rev}^{commit}`], {
        cwd: projectRoot,
        encoding: 'utf8',
    }).trim();
    const dir = join(mkdtempSync(join(tmpdir(), 'dragnet-bench-against-')), commit);
    execFileSync('git', ['worktree', 'add', '--detach', '--quiet', dir, commit], { cwd: projectRoot });
    symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'));
    return {
        crawler: {
            name: `dragnet@${commit}`,
            label: `dragnet at ${commit}`,
            script: join(dir, 'bench/crawlers/dragnet.ts'),
            measuredAsTree: true,
        },
        remove: () => {
            execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: projectRoot });
            rmSync(join(dir, '..'), { recursive: true, force: true });
        },
    };
}
