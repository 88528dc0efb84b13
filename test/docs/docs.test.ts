/**
 * The docs cannot drift: README.md and every page under docs/ are checked against the tree, the
 * scripts, the option table and the commands' own flags (checkDocs.ts); the README stays a front
 * door of at most 250 lines from which every page can be reached; and the checks themselves are
 * shown to catch each kind of drift on a page made to have it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ENVIRONMENT_ONLY, OPTIONS } from '../../src/options/options.js';
import type { OptionSpec } from '../../src/options/optionSpec.js';
import { INPUT_VARIABLE } from '../../src/options/runInput.js';
import { ROOT } from '../helpers/cli.js';
import { checkMarkdown, type Finding, type Known } from './checkDocs.js';

const README_MAX_LINES = 250;

/** README.md and every markdown file under docs/, relative to the root. */
function pages(): string[] {
    const under = (dir: string): string[] =>
        readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
            const path = join(dir, entry.name);
            if (entry.isDirectory()) return under(path);
            return entry.name.endsWith('.md') ? [path] : [];
        });
    return ['README.md', ...under('docs')];
}

const specs: OptionSpec[] = Object.values(OPTIONS);
const tableFlags = specs.map((spec) => spec.flag);

/**
 * A command's flags, read from its source: the keys of its own parseArgs options
 * (`name: { type: ... }`), and the table's options it shares, named in it by their option names.
 */
function flagsOfCommand(file: string): Set<string> {
    const source = readFileSync(join(ROOT, file), 'utf8');
    const own = [
        ...source.matchAll(/(?:'([a-z][a-z0-9-]*)'|\b([a-z][a-zA-Z0-9]*)):\s*\{\s*type:\s*'(?:string|boolean)'/g),
    ].map((match) => match[1] ?? match[2]!);
    const shared = source.includes('Object.keys(OPTIONS)')
        ? tableFlags
        : [...source.matchAll(/'([a-z][a-zA-Z0-9]*)'/g)].flatMap(([, name]) =>
              name! in OPTIONS ? [OPTIONS[name as keyof typeof OPTIONS].flag] : [],
          );
    return new Set([...own, ...shared, 'help']);
}

function known(): Known {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
    };
    const commandFlags = new Map<string, Set<string>>([['start', new Set([...tableFlags, 'input', 'help'])]]);
    for (const [name, command] of Object.entries(scripts)) {
        const file = /^tsx ((?:src\/commands|bench)\/[\w/]+\.ts)$/.exec(command)?.[1];
        if (file) commandFlags.set(name, flagsOfCommand(file));
    }
    return {
        root: ROOT,
        scripts: new Set(Object.keys(scripts)),
        commandFlags,
        variables: new Set([
            ...specs.map((spec) => spec.env),
            ...ENVIRONMENT_ONLY.map((variable) => variable.env),
            INPUT_VARIABLE,
        ]),
    };
}

const shown = (findings: Finding[]) =>
    findings.map(({ file, line, problem }) => `${file}:${line}: ${problem}`).join('\n');

describe('the docs', () => {
    const context = known();

    it(`name only links, anchors, scripts, flags, variables and \
paths that exist, and no dates or commit hashes in prose`, () => {
        const findings = pages().flatMap((page) =>
            checkMarkdown(page, readFileSync(join(ROOT, page), 'utf8'), context),
        );
        assert.deepEqual(findings, [], `\n${shown(findings)}`);
    });

    it(`keep the README a front door: at most ${README_MAX_LINES} \
lines, from which every page of docs/ can be reached`, () => {
        const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
        assert.ok(
            readme.split('\n').length - 1 <= README_MAX_LINES,
            `README.md has ${readme.split('\n').length - 1} lines`,
        );
        const reached = new Set<string>();
        const visit = (page: string) => {
            // A link to no file is the other test's finding.
            if (reached.has(page) || !existsSync(join(ROOT, page))) return;
            reached.add(page);
            const text = readFileSync(join(ROOT, page), 'utf8');
            for (const [, href] of text.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
                const target = normalize(join(dirname(page), href!));
                if (!relative(ROOT, join(ROOT, target)).startsWith('..')) visit(target);
            }
        };
        visit('README.md');
        const unreached = pages().filter((page) => !reached.has(page));
        assert.deepEqual(unreached, [], 'pages no link from the README leads to');
    });
});

describe('the docs check', () => {
    const context = known();
    const check = (text: string) => checkMarkdown('docs/made-up.md', text, context).map((finding) => finding.problem);

    it('finds a link to no file, and an anchor that no heading gives', () => {
        const problems = check(
            '# Here\n\nSee [there](nowhere.md), ' +
                '[that](../README.md#no-such-heading), [this](#here) and [self](#gone).\n',
        );
        assert.deepEqual(problems, [
            'nowhere.md: no such file',
            '../README.md#no-such-heading: README.md has no heading #no-such-heading',
            '#gone: this page has no heading #gone',
        ]);
    });

    it('finds an unknown flag given to a command or shown alone, an unknown script and an unknown variable', () => {
        const problems = check(
            [
                '```sh',
                'npm start -- --max-concurency 5 --site demo-shop',
                'npm run export -- --format csv --max-concurrency 3',
                'npm run deploy',
                'DRAGNET_MAX_CONCURENCY=5 npm start',
                'apt-get install -y --no-install-recommends chromium',
                '```',
                '',
                'Give `--site NAME`, not `--sites NAME`.',
            ].join('\n'),
        );
        assert.deepEqual(problems.sort(), [
            '--max-concurency: npm start takes no such flag',
            '--max-concurrency: npm run export takes no such flag',
            '--sites: no dragnet command takes such a flag',
            'DRAGNET_MAX_CONCURENCY: no option or variable of that name (src/options/options.ts)',
            'npm run deploy: package.json has no such script',
        ]);
    });

    it(`finds a path of the tree that is not in it, and history \
in prose but not in literal output or a generated block`, () => {
        const problems = check(
            [
                'The stage is `src/fetch/httpStage.ts`; `src/fetch/http/httpStage.ts` is where it is.',
                '',
                'Measured on 2026-12-05 at a9d9db2.',
                '',
                '```',
                'dragnet: finished 2026-12-05T16:59:39Z',
                '```',
                '',
                '<!-- bench: cpu (generated by npm run docs) -->',
                'at a9d9db2, 2026-12-05',
                '<!-- bench: end -->',
            ].join('\n'),
        );
        assert.deepEqual(problems.sort(), [
            'history in prose: "2026-12-05" (a date: the past is in git, measurements in bench/results/)',
            'history in prose: "a9d9db2" (a commit hash)',
            'src/fetch/httpStage.ts: no such file or folder',
        ]);
    });
});
