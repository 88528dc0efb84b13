/**
 * `npm run bench [-- <suite> ...] [--runs N] [--products N,N] [--large]`
 *
 * Runs the named suites (default: every suite with `runByDefault`), each a file `bench/<name>.ts`
 * that default-exports `defineSuite({...})` (lib/suite.ts). A file in bench/ that does not is a
 * standalone script: it runs, in a child process, only when named. Every case prints one JSON line on
 * stdout as soon as it is done; a short table per suite goes to stderr at the end; and each suite's
 * (or script's) whole result, with the machine, Node, commit and command, replaces
 * bench/results/<name>.json (lib/results.ts), from which docs/benchmarks.md is generated. The
 * machine is shared and noisy: suites report medians over runs and ratios of medians, with the
 * crawlers alternating run by run.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkOutAgainst } from './lib/against.js';
import { resultPath, scriptCases, startResult, writeResult } from './lib/results.js';
import { takeLeftOut } from './lib/runCrawler.js';
import type { BenchOptions, CaseReport, Suite, TableRow } from './lib/suite.js';
import { formatTable } from './lib/table.js';

const benchDir = new URL('./', import.meta.url);
const projectRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * What is in bench/: every .ts file directly in it but this runner. A file that calls
 * `defineSuite(` is a suite module (importing it has no side effects); any other file is a
 * standalone script, which runs when imported, so it is only ever started as a child process.
 */
interface Entry {
    name: string;
    kind: 'suite' | 'script';
}

async function discover(): Promise<Entry[]> {
    const files = (await readdir(benchDir)).filter((file) => file.endsWith('.ts') && file !== 'run.ts').sort();
    return Promise.all(
        files.map(async (file) => {
            const source = await readFile(new URL(file, benchDir), 'utf8');
            return {
                name: file.slice(0, -'.ts'.length),
                kind: /\bdefineSuite\(/.test(source) ? ('suite' as const) : ('script' as const),
            };
        }),
    );
}

async function loadSuite(name: string): Promise<Suite> {
    const module = (await import(new URL(`./${name}.ts`, benchDir).href)) as { default?: Suite };
    if (!module.default || typeof module.default.run !== 'function')
        throw new Error(`bench/${name}.ts does not default-export defineSuite({...})`);
    return module.default;
}

/**
 * A standalone script: run with its own defaults, its stdout
 * (JSON lines) passed through as is and kept as its cases.
 */
async function runScript(name: string): Promise<CaseReport[]> {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(`./${name}.ts`, benchDir))], {
        cwd: projectRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        process.stdout.write(chunk);
        output += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (code !== 0) throw new Error(`bench/${name}.ts exited with code ${code}`);
    return scriptCases(output);
}

function parseOptions(argv: string[]): {
    suites: string[];
    options: BenchOptions;
    /** Whether `--runs` was given: if not, a suite's own `defaultRuns` holds. */
    runsGiven: boolean;
    against?: string;
    help: boolean;
} {
    const { values, positionals } = parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
            runs: { type: 'string' },
            products: { type: 'string' },
            large: { type: 'boolean', default: false },
            'page-weight': { type: 'string', default: 'real' },
            against: { type: 'string' },
            'dragnet-only': { type: 'boolean', default: false },
            scale: { type: 'string', default: '1' },
            'max-concurrency': { type: 'string' },
            baselines: { type: 'boolean', default: false },
            help: { type: 'boolean', short: 'h', default: false },
        },
    });
    const runs = Number(values.runs ?? '3');
    if (!Number.isInteger(runs) || runs < 1) throw new UsageError('--runs must be a whole number >= 1');
    const products = values.products?.split(',').map((size) => Number(size.replace(/_/g, '')));
    if (products?.some((size) => !Number.isInteger(size) || size < 1))
        throw new UsageError('--products must be whole numbers >= 1, comma-separated');
    const scale = Number(values.scale);
    if (!(scale > 0)) throw new UsageError('--scale must be a number > 0');
    const maxConcurrency = values['max-concurrency'] === undefined ? undefined : Number(values['max-concurrency']);
    if (maxConcurrency !== undefined && !(Number.isInteger(maxConcurrency) && maxConcurrency >= 1))
        throw new UsageError('--max-concurrency must be a whole number >= 1');
    const pageWeight = values['page-weight'];
    if (pageWeight !== 'real' && pageWeight !== 'light') throw new UsageError('--page-weight must be real or light');
    return {
        suites: positionals,
        options: {
            runs,
            products,
            large: values.large ?? false,
            pageWeight,
            dragnetOnly: values['dragnet-only'] ?? false,
            scale,
            maxConcurrency,
            baselines: values.baselines ?? false,
        },
        runsGiven: values.runs !== undefined,
        against: values.against,
        help: values.help ?? false,
    };
}

class UsageError extends Error {}

async function help(entries: Entry[]): Promise<string> {
    const lines = [
        'usage: npm run bench [-- <suite> ...] [--runs N] [--products N,N] ' +
            '[--large] [--page-weight real|light] [--against REV] [--dragnet-only] ' +
            '[--scale X] [--max-concurrency N] [--baselines]',
        '',
        'suites (* = run when none is named):',
    ];
    for (const { name, kind } of entries) {
        const description =
            kind === 'suite'
                ? await loadSuite(name).then(
                      (suite) => `${suite.runByDefault ? '*' : ' '} ${name.padEnd(10)} ${suite.description}`,
                  )
                : `  ${name.padEnd(10)} standalone script, run with its own ` +
                  `defaults (no defineSuite); for its flags: npx tsx bench/${name}.ts`;
        lines.push(`  ${description}`);
    }
    lines.push(
        '',
        "--runs N        runs of each crawler per case (default 3, or the suite's own); medians are reported",
    );
    lines.push("--products N,N  shop sizes instead of the suites' defaults");
    lines.push("--large         the suites' large sizes (slow)");
    lines.push(
        "--page-weight W real (default): the shop's pages weigh what a real store's do; light: the small test pages",
    );
    lines.push(
        '--against REV   the cpu and latency suites also run dragnet ' +
            'at commit REV, in a temporary worktree, beside the working tree',
    );
    lines.push(
        '--dragnet-only  the cpu and latency suites leave out plain Crawlee and Scrapy: a cheaper A/B with --against',
    );
    lines.push('--scale X       the seed suite at a share of its 400,000 products (default 1; 0.1 is 40,000)');
    lines.push("--max-concurrency N  the seed suite's ceiling for dragnet (default: none, dragnet's own width)");
    lines.push('--baselines     the seed suite also runs Scrapy and plain Crawlee above --scale 0.1 (hours)');
    lines.push(
        '',
        "Each suite's result replaces bench/results/<suite>.json " +
            '(docs/benchmarks.md is generated from it by npm run docs);',
    );
    lines.push(
        'a run with --against or --dragnet-only is an A/B and goes ' +
            'to bench/results/ab/<suite>.json instead, which git ignores.',
    );
    return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
    const { suites: named, options, runsGiven, against, help: wantsHelp } = parseOptions(process.argv.slice(2));
    const entries = await discover();
    if (wantsHelp) {
        process.stdout.write(await help(entries));
        return;
    }
    const unknown = named.filter((name) => !entries.some((entry) => entry.name === name));
    if (unknown.length > 0)
        throw new UsageError(`unknown suite ${unknown.join(', ')}; suites: ${entries.map((e) => e.name).join(', ')}`);

    // Named: those, in the order given. None named: the suite modules that ask to run by default.
    const chosen: Array<{ name: string; suite?: Suite }> = [];
    for (const entry of named.length > 0 ? named.map((name) => entries.find((e) => e.name === name)!) : entries) {
        if (entry.kind === 'script') {
            if (named.length > 0) chosen.push({ name: entry.name });
            continue;
        }
        const suite = await loadSuite(entry.name);
        if (named.length > 0 || suite.runByDefault) chosen.push({ name: entry.name, suite });
    }

    const checkout = against === undefined ? undefined : checkOutAgainst(against);
    options.against = checkout?.crawler;
    try {
        await runChosen(chosen, options, runsGiven);
    } finally {
        checkout?.remove();
    }
}

async function runChosen(
    chosen: Array<{ name: string; suite?: Suite }>,
    given: BenchOptions,
    runsGiven: boolean,
): Promise<void> {
    const tables: string[] = [];
    for (const { name, suite } of chosen) {
        const options = !runsGiven && suite?.defaultRuns ? { ...given, runs: suite.defaultRuns } : given;
        // A script gets none of the flags: its result is its defaults', and never an A/B.
        const result = startResult(projectRoot, name, suite ? options : undefined);
        if (!suite) {
            result.cases.push(...(await runScript(name)));
        } else {
            const rows: TableRow[] = [];
            takeLeftOut();
            await suite.run(options, (report: CaseReport) => {
                const machine = {
                    node: process.version,
                    cpus: cpus().length,
                    loadAvg1m: Math.round(loadavg()[0]! * 100) / 100,
                };
                process.stdout.write(`${JSON.stringify({ suite: name, ...report.json, machine })}\n`);
                rows.push(...report.rows);
                result.cases.push(report);
            });
            tables.push(formatTable(`bench ${name} (medians of ${options.runs} runs each)`, rows));
        }
        const variant = suite?.variant?.(options);
        const path = resultPath(projectRoot, variant ? `${name}@${variant}` : name, suite ? options : undefined);
        await writeResult(path, result.finish(suite ? takeLeftOut() : []));
        process.stderr.write(`bench ${name}: wrote ${relative(projectRoot, path)}\n`);
    }
    if (tables.length > 0) process.stderr.write(`\n${tables.join('\n')}`);
}

main().catch((error: unknown) => {
    const usage =
        error instanceof UsageError ||
        (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'));
    const message = usage
        ? (error as Error).message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    process.stderr.write(`bench: ${message}\n`);
    process.exitCode = usage ? 2 : 1;
});
