/**
 * The shape of src/, as docs/architecture.md draws it: the top holds the entry points and every
 * other module sits in a room; the parts import one another only along the flow (the frontier is
 * the one way back), and so do the rooms of fetch/; monitor/ imports nothing it observes, the
 * vocabulary is a leaf, no module imports itself round a cycle, nothing in src/ reaches into test/
 * or bench/, no file grows past 300 lines of code and no folder past 15 files. Imports are read from the
 * source text, type-only ones and dynamic `import()` included. And what a command loads at its
 * start: the commands that never talk to Redis do not load its client and BullMQ, and a route
 * file's `import ... from 'dragnet'` loads the route API, not the pipeline.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers/cli.js';

const SRC = join(ROOT, 'src');

/**
 * What each part may import besides itself and the leaves: the route API (site/site.ts), the
 * selectors it runs (site/selectors.ts) and ConfigError. The rest of src/ (the entry points, wiring/,
 * options/, runtime/, site/'s loading, authoring/ and commands/) may import any part.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
    vocabulary: [],
    quality: ['vocabulary'],
    monitor: ['vocabulary'],
    store: ['vocabulary', 'quality', 'monitor'],
    frontier: ['vocabulary', 'store', 'monitor'],
    parse: ['vocabulary', 'frontier', 'quality', 'store'],
    fetch: ['vocabulary', 'frontier', 'parse', 'quality', 'store'],
    demo: [],
};
const LEAVES = ['site/site.ts', 'site/selectors.ts', 'options/configError.ts'];
/**
 * The rooms of fetch/, in the order a request meets them, and what each may import from the others:
 * failure classes and retry policy, then pacing (concurrency, timeouts, politeness), then egress
 * (exits, identities, sessions), then the two stages; the HTTP stage escalates to the browser, and
 * sends on the chrome wire profile (wire/) through the seam it declares, which wiring/ fills. The
 * files at the top of fetch/ (the Crawlee hooks, the failure handlers, the stages' options) are
 * shared by both stages.
 */
const FETCH_ROOMS_MAY_IMPORT: Record<string, readonly string[]> = {
    failures: [],
    pacing: ['failures'],
    egress: ['failures', 'pacing'],
    top: ['failures', 'pacing', 'egress', 'http'],
    http: ['failures', 'pacing', 'egress', 'top', 'browser'],
    browser: ['failures', 'pacing', 'egress', 'top'],
    wire: ['failures', 'pacing', 'egress', 'http', 'browser'],
};
/** The top of src/: its entry points, nothing else. */
const ENTRY_POINTS = ['index.ts', 'main.ts', 'run.ts'];
const MAX_LINES = 300;
const MAX_FILES_PER_FOLDER = 15;

/** Every .ts file under `dir`, as paths relative to src/. */
function sourceFiles(dir = SRC): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return sourceFiles(path);
        return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
    });
}

/** A file of src/ without its comments. */
function codeOf(file: string): string {
    return readFileSync(join(SRC, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
}

/** A relative import of `file`, as the path relative to src/ of the .ts file it names. */
function srcPathOf(file: string, specifier: string): string {
    return relative(SRC, resolve(dirname(join(SRC, file)), specifier)).replace(/\.js$/, '.ts');
}

/** The relative imports of a file (static, type-only, re-exports and dynamic), resolved to paths relative to src/. */
function importsOf(file: string): string[] {
    const specifiers = [
        ...codeOf(file).matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm),
    ].map((match) => match[1]!);
    return specifiers.map((specifier) => srcPathOf(file, specifier));
}

/**
 * What importing a file loads at once: its static imports that are not `import type` (a named import
 * of types alone is counted too, so the check errs on the side of loading), as paths relative to src/
 * and package names. Dynamic `import()` is left out: it loads only when it runs.
 */
function loadsOf(file: string): string[] {
    const specifiers = [
        ...codeOf(file).matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^;']*?\bfrom\s+)?'([^']+)'/gm),
    ].map((match) => match[1]!);
    return specifiers.map((specifier) => {
        if (specifier.startsWith('.')) return srcPathOf(file, specifier);
        return specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
    });
}

/** Every package `entry` loads, through the files of src/ it loads, each with the chain of imports that reaches it. */
function packagesLoadedBy(entry: string): Map<string, string> {
    const packages = new Map<string, string>();
    const seen = new Set<string>();
    const visit = (file: string, chain: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        for (const target of loadsOf(file)) {
            if (target.endsWith('.ts')) visit(target, `${chain} → ${target}`);
            else if (!target.startsWith('node:') && !packages.has(target)) packages.set(target, `${chain} → ${target}`);
        }
    };
    visit(entry, entry);
    return packages;
}

/** The part a file belongs to: its folder under src/, or the file itself for a top-level module. */
const partOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : file);
/** The room of fetch/ a file of fetch/ is in: its folder there, or `top`. */
const fetchRoomOf = (file: string) => (file.split('/').length > 2 ? file.split('/')[1]! : 'top');

const files = sourceFiles();
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('the layout of src/', () => {
    it('reads the imports it checks (the walk sees the wiring import every part)', () => {
        const parts = new Set([...graph.values()].flat().map(partOf));
        for (const part of Object.keys(MAY_IMPORT)) assert.ok(parts.has(part), `something imports ${part}/`);
        assert.ok(graph.get('run.ts')!.includes('wiring/build.ts'), graph.get('run.ts')!.join(', '));
        assert.ok(
            graph.get('fetch/http/httpStage.ts')!.includes('fetch/failures/failures.ts'),
            'the walk sees the rooms of fetch/',
        );
    });

    it('has every import resolve to a file of src/ (nothing from test/, bench/ or routes/)', () => {
        for (const [file, imports] of graph) {
            for (const target of imports)
                assert.ok(graph.has(target), `${file} imports ${target}, which is not a module of src/`);
        }
    });

    it(`lets each part import only the parts before it in the flow: frontier, \
store, quality and monitor nothing from fetch, monitor nothing it observes`, () => {
        const against: string[] = [];
        for (const [file, imports] of graph) {
            const allowed = MAY_IMPORT[partOf(file)];
            if (!allowed) continue;
            for (const target of imports) {
                const part = partOf(target);
                if (part !== partOf(file) && !LEAVES.includes(target) && !allowed.includes(part))
                    against.push(`${file} → ${target}`);
            }
        }
        assert.deepEqual(against, [], `imports against the flow:\n${against.join('\n')}`);
    });

    it('lets each room of fetch/ import only the rooms before it', () => {
        const against: string[] = [];
        for (const [file, imports] of graph) {
            if (partOf(file) !== 'fetch') continue;
            const room = fetchRoomOf(file);
            const allowed = FETCH_ROOMS_MAY_IMPORT[room];
            assert.ok(allowed, `${file} is in fetch/${room}/, a room the rules do not know`);
            for (const target of imports.filter((target) => partOf(target) === 'fetch')) {
                const targetRoom = fetchRoomOf(target);
                if (targetRoom !== room && !allowed.includes(targetRoom)) against.push(`${file} → ${target}`);
            }
        }
        assert.deepEqual(against, [], `imports against the flow of fetch/:\n${against.join('\n')}`);
    });

    it('holds only the entry points at the top of src/', () => {
        assert.deepEqual(files.filter((file) => !file.includes('/')).sort(), ENTRY_POINTS);
    });

    it(`has no folder of more than ${MAX_FILES_PER_FOLDER} files`, () => {
        const perFolder = new Map<string, number>();
        for (const file of files) perFolder.set(dirname(file), (perFolder.get(dirname(file)) ?? 0) + 1);
        assert.deepEqual(
            [...perFolder].filter(([, count]) => count > MAX_FILES_PER_FOLDER),
            [],
        );
    });

    it(`keeps the route API, its selectors and ConfigError \
leaves (they import nothing from src/ but one another)`, () => {
        for (const leaf of LEAVES)
            assert.deepEqual(
                graph.get(leaf)!.filter((target) => !LEAVES.includes(target)),
                [],
                `${leaf} imports nothing from src/ but the leaves`,
            );
        assert.deepEqual(graph.get('site/selectors.ts'), [], 'site/selectors.ts imports nothing from src/');
    });

    it('has no import cycle', () => {
        const state = new Map<string, 'visiting' | 'done'>();
        const cycles: string[] = [];
        const visit = (file: string, path: string[]) => {
            if (state.get(file) === 'done') return;
            if (state.get(file) === 'visiting') {
                cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
                return;
            }
            state.set(file, 'visiting');
            for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
            state.set(file, 'done');
        };
        for (const file of files) visit(file, []);
        assert.deepEqual(cycles, [], `import cycles:\n${cycles.join('\n')}`);
    });

    // Lines of code, not of text: a comment that says why, or a call the formatter wraps, is no reason to split a file.
    it(`has no file of more than ${MAX_LINES} lines of code`, () => {
        const long = files
            .map((file) => ({
                file,
                lines: codeOf(file)
                    .split('\n')
                    .filter((line) => line.trim() !== '').length,
            }))
            .filter(({ lines }) => lines > MAX_LINES);
        assert.deepEqual(long, []);
    });
});

describe('what a command loads', () => {
    it(`export and reparse, which may read PostgreSQL but never Redis, \
load neither BullMQ nor ioredis (~0.3 CPU-s of every start)`, () => {
        for (const command of ['commands/export.ts', 'commands/reparse.ts']) {
            const packages = packagesLoadedBy(command);
            assert.ok(
                packages.has('pg'),
                `the walk reaches PostgreSQL's client from ${command}: ${[...packages.keys()].join(', ')}`,
            );
            for (const unneeded of ['bullmq', 'ioredis'])
                assert.equal(packages.get(unneeded), undefined, `${command} loads ${unneeded}`);
        }
    });
});

describe("the public API ('dragnet', src/index.ts)", () => {
    it(`loads the route API and not the pipeline: a route file \
is loaded by every parse worker and by export and reparse`, () => {
        const packages = packagesLoadedBy('index.ts');
        assert.ok(
            packages.has('domutils'),
            `the walk reaches the route API's packages: ${[...packages.keys()].join(', ')}`,
        );
        for (const heavy of [
            '@crawlee/core',
            '@crawlee/http',
            'playwright',
            'bullmq',
            'ioredis',
            'pg',
            'better-sqlite3',
            'pino',
        ]) {
            assert.equal(packages.get(heavy), undefined, `'dragnet' loads ${heavy}`);
        }
    });

    it('is what package.json exports under the package name, and what the route files import', () => {
        const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
            name: string;
            exports: Record<string, string>;
        };
        assert.equal(pkg.name, 'dragnet');
        assert.equal(pkg.exports['.'], './src/index.ts');
        for (const file of readdirSync(join(ROOT, 'routes')).filter((name) => name.endsWith('.ts'))) {
            const source = readFileSync(join(ROOT, 'routes', file), 'utf8');
            assert.match(source, /from 'dragnet'/, `routes/${file} imports the route API as 'dragnet'`);
            assert.doesNotMatch(source, /from '\.\.\/src\//, `routes/${file} reaches into src/`);
        }
    });
});
