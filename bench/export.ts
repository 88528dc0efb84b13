/**
 * Export in bounded memory (issue 6): a site's dataset filled with N items (100,000 by default;
 * `--products` gives other item counts), then the real command — `npm run export -- --site S
 * --format jsonl|csv --out FILE --storage-dir DIR` — run as a child process whose process tree
 * (npm → sh → tsx → node) is sampled from /proc every 250 ms. Each size also runs at a tenth of
 * it, in the same alternation, so the table shows whether memory grows with the item count.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Dataset } from 'crawlee';
import { openStorage, storeNames } from '../src/store/datasets.js';
import { sampleTree } from './lib/processTree.js';
import { median, ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const DEFAULT_ITEMS = [100_000];
const LARGE_ITEMS = [1_000_000];
const FORMATS = ['jsonl', 'csv'] as const;
const SITE = 'bench-export';
const BATCH = 1_000;
const projectRoot = fileURLToPath(new URL('../', import.meta.url));

type Format = (typeof FORMATS)[number];

/**
 * One item as a crawl of the demo shop stores it: the route's
 * fields and the `_` fields dragnet adds (~600 bytes of JSON).
 */
function item(n: number): Record<string, unknown> {
    const id = String(n).padStart(6, '0');
    return {
        title: `Sturdy Oak Lamp ${n}`,
        price: Math.round((5 + (n % 997) * 1.37) * 100) / 100,
        currency: 'USD',
        sku: `SKU-${id}`,
        availability: n % 7 === 0 ? 'out_of_stock' : 'in_stock',
        stock: n % 7 === 0 ? 0 : n % 50,
        description:
            `A sturdy oak lamp, built to last and easy to clean, for the kitchen, ` +
            `a small apartment or the patio. Item ${n}, "quoted", with a comma.`,
        category: ['Kitchen', 'Garden', 'Lighting', 'Office', 'Outdoor'][n % 5],
        _url: `http://127.0.0.1:8080/products/sturdy-oak-lamp-${n}`,
        _route: 'product',
        _rawKey: `${id}${'0'.repeat(14)}-http`,
        _renderer: 'http',
        _fetchedAt: new Date(1_700_000_000_000 + n * 1000).toISOString(),
    };
}

/** A storage dir whose site dataset holds `count` items, pushed through the Dataset API in batches. */
async function filledStore(count: number): Promise<{ dir: string; fillSec: number }> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-bench-export-'));
    const started = performance.now();
    const { config, storage } = openStorage(dir);
    try {
        const dataset = await Dataset.open(storeNames(SITE).items, { config });
        for (let from = 0; from < count; from += BATCH) {
            await dataset.pushData(Array.from({ length: Math.min(BATCH, count - from) }, (_, i) => item(from + i + 1)));
        }
    } finally {
        await storage.close();
    }
    return { dir, fillSec: (performance.now() - started) / 1000 };
}

interface ExportRun {
    /** Wall time of the whole command, from spawning npm to its exit. */
    seconds: number;
    /**
     * From the output file's creation (the export's first step, once
     * modules are loaded and storage is open) to the command's exit.
     */
    exportSec: number | null;
    /**
     * Highest VmHWM of any one process of the tree: the exporting
     * Node process (npm and tsx's launcher take far less).
     */
    peakRssMb: number;
    /** Highest sum of VmRSS over the whole tree at one sample (npm + sh + tsx + node). */
    treePeakRssMb: number;
    outputMb: number;
    lines: number;
}

/** Runs `npm run export -- --site SITE --format F --out OUT --storage-dir DIR` the way a user would. */
async function runExport(
    format: Format,
    out: string,
    storageDir: string,
): Promise<ExportRun & { code: number | null; stderr: string }> {
    const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith('DRAGNET_') && !name.startsWith('CRAWLEE_')),
    );
    const args = ['--site', SITE, '--format', format, '--out', out, '--storage-dir', storageDir];
    const started = performance.now();
    const child = spawn('npm', ['run', '-s', 'export', '--', ...args], {
        cwd: projectRoot,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
    });
    const sampler = sampleTree({ pid: child.pid!, intervalMs: 250 });
    // The file appears when the export starts writing (createWriteStream opens it first thing); looked for every 20 ms.
    let createdAt: number | undefined;
    const watch = setInterval(() => {
        if (createdAt === undefined)
            void stat(out).then(
                () => (createdAt ??= performance.now()),
                () => undefined,
            );
    }, 20);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const ended = performance.now();
    clearInterval(watch);
    const samples = await sampler.stop();
    return {
        code,
        stderr,
        seconds: (ended - started) / 1000,
        exportSec: createdAt === undefined ? null : (ended - createdAt) / 1000,
        peakRssMb: Math.max(0, ...sampler.peakHwmMb().map((p) => p.hwmMb)),
        treePeakRssMb: Math.max(0, ...samples.map((s) => s.rssMb)),
        outputMb: (await stat(out).catch(() => ({ size: 0 }))).size / 2 ** 20,
        lines: await countLines(out),
    };
}

async function countLines(path: string): Promise<number> {
    const text = await readFile(path, 'utf8').catch(() => '');
    let lines = 0;
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
    return lines;
}

export default defineSuite({
    description:
        'npm run export of a 100,000-item dataset (and a tenth of it) to JSONL and CSV: seconds, items/s, peak RSS',
    runByDefault: false,
    async run(options, report) {
        for (const items of options.products ?? (options.large ? LARGE_ITEMS : DEFAULT_ITEMS)) {
            const sizes = [Math.max(1, Math.round(items / 10)), items];
            const stores = new Map<number, { dir: string; fillSec: number }>();
            try {
                for (const size of sizes) {
                    const store = await filledStore(size);
                    stores.set(size, store);
                    process.stderr.write(`bench export: filled ${size} items in ${round(store.fillSec, 1)}s\n`);
                }
                const results = new Map<string, ExportRun[]>();
                const failures: string[] = [];
                // Alternating sizes and formats run by run, so drift in the machine's load hits all alike.
                for (let run = 1; run <= options.runs; run++) {
                    for (const format of FORMATS) {
                        for (const size of sizes) {
                            const dir = stores.get(size)!.dir;
                            const out = join(dir, `export.${format}`);
                            const result = await runExport(format, out, dir);
                            await rm(out, { force: true });
                            const expected = size + (format === 'csv' ? 1 : 0);
                            const ok = result.code === 0 && result.lines === expected;
                            const lastWords = result.stderr.trim().split('\n').slice(-3).join(' | ');
                            const outcome = ok
                                ? `${round(result.seconds, 2)}s, peak RSS ${round(result.peakRssMb)} MB, ` +
                                  `${round(result.outputMb)} MB written`
                                : `FAILED (exit ${result.code}, ${result.lines} lines of ${expected}: ${lastWords})`;
                            process.stderr.write(
                                `bench export ${format} ${size}: run ${run}/${options.runs}: ${outcome}\n`,
                            );
                            if (!ok) {
                                failures.push(`${format} ${size} run ${run}`);
                                continue;
                            }
                            const key = `${format}:${size}`;
                            results.set(key, [...(results.get(key) ?? []), result]);
                        }
                    }
                }
                for (const format of FORMATS) {
                    const figures = (size: number) => {
                        const runs = results.get(`${format}:${size}`) ?? [];
                        const seconds = median(runs.map((r) => r.seconds));
                        const exportSec = median(runs.flatMap((r) => (r.exportSec === null ? [] : [r.exportSec])));
                        return {
                            seconds: seconds === null ? null : round(seconds, 2),
                            exportSec: exportSec === null ? null : round(exportSec, 2),
                            itemsPerSec: exportSec === null ? null : Math.round(size / exportSec),
                            peakRssMb: median(runs.map((r) => round(r.peakRssMb))),
                            treePeakRssMb: median(runs.map((r) => round(r.treePeakRssMb))),
                            outputMb: median(runs.map((r) => round(r.outputMb, 1))),
                            perRun: runs.map((r) => ({
                                seconds: round(r.seconds, 2),
                                exportSec: r.exportSec === null ? null : round(r.exportSec, 2),
                                peakRssMb: round(r.peakRssMb),
                                treePeakRssMb: round(r.treePeakRssMb),
                            })),
                        };
                    };
                    const [tenth, full] = [figures(sizes[0]!), figures(items)];
                    report({
                        json: {
                            case: `export-${format}-${items}`,
                            items,
                            format,
                            ...full,
                            fillSec: round(stores.get(items)!.fillSec, 1),
                            atTenth: { items: sizes[0], ...tenth },
                            rssVersusTenth: ratio(full.peakRssMb, tenth.peakRssMb),
                            failed: failures.filter((f) => f.startsWith(format)),
                        },
                        rows: [sizes[0]!, items].map((size) => {
                            const f = size === items ? full : tenth;
                            return {
                                format,
                                items: size,
                                seconds: f.seconds,
                                'export s': f.exportSec,
                                'items/s': f.itemsPerSec,
                                'peak RSS MB': f.peakRssMb,
                                'tree RSS MB': f.treePeakRssMb,
                                'output MB': f.outputMb,
                            };
                        }),
                    });
                }
            } finally {
                for (const { dir } of stores.values()) await rm(dir, { recursive: true, force: true });
            }
        }
    },
});
