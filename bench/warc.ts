/**
 * What writing one response record costs, on the pages of the fixture shop at real weight: webrecorder's
 * `warcio` serializer (gzip and SHA-1 digests, as dragnet would call it) against dragnet's own
 * (src/store/archive/warcRecord.ts and a synchronous gzip member). The figure that decided dragnet
 * writes its records itself (docs/archive.md). CPU is the process's, its threads included. One JSON line:
 *
 *     {"bench":"warc","pages":…,"pageKb":…,"cpuMsPerRecord":{"warcio":…,"dragnet":…},"ratio":…}
 *
 *     npx tsx bench/warc.ts [--records 2000]
 */
import { parseArgs } from 'node:util';
import { constants, gzipSync } from 'node:zlib';
import { WARCRecord, WARCSerializer } from 'warcio';
import { startShop } from '../src/demo/shop.js';
import { httpResponseBlock, payloadOffsetOf, warcRecord } from '../src/store/archive/warcRecord.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '2000' } } });
const records = Number(values.records);
const ROUNDS = 3;

const shop = await startShop({ pageWeight: 'real', products: 50, transientFailureRate: 0, scriptOnlyRate: 0 });
const pages: { url: string; body: Buffer }[] = [];
for (const product of shop.products) {
    const url = `${shop.url}${product.path}`;
    pages.push({ url, body: Buffer.from(await (await fetch(url)).arrayBuffer()) });
}
await shop.close();
const headers = { 'content-type': 'text/html; charset=utf-8', date: new Date().toUTCString() };
const date = new Date().toISOString();

async function withWarcio(n: number): Promise<void> {
    const { url, body } = pages[n % pages.length]!;
    const record = WARCRecord.create(
        { url, date, type: 'response', warcVersion: 'WARC/1.1', statusline: 'HTTP/1.1 200 OK', httpHeaders: headers },
        [body],
    );
    await WARCSerializer.serialize(record, { gzip: true, digest: { algo: 'sha-1', prefix: 'sha1:', base32: true } });
}

function withDragnet(n: number): void {
    const { url, body } = pages[n % pages.length]!;
    const block = httpResponseBlock(200, headers, body);
    const record = warcRecord(
        {
            type: 'response',
            date,
            targetUri: url,
            contentType: 'application/http; msgtype=response',
            payloadOffset: payloadOffsetOf(block),
        },
        block,
    );
    gzipSync(record.bytes, { level: constants.Z_BEST_SPEED });
}

async function cpuMsPerRecord(write: (n: number) => unknown): Promise<number> {
    const start = process.cpuUsage();
    for (let n = 0; n < records; n++) await write(n);
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000 / records;
}

const warcio: number[] = [];
const dragnet: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
    warcio.push(await cpuMsPerRecord(withWarcio));
    dragnet.push(await cpuMsPerRecord(withDragnet));
}
const perRecord = { warcio: median(warcio) ?? 0, dragnet: median(dragnet) ?? 0 };
const pageKb = pages.reduce((sum, page) => sum + page.body.length, 0) / pages.length / 1024;
console.log(
    JSON.stringify({
        bench: 'warc',
        pages: pages.length,
        pageKb: Number(pageKb.toFixed(1)),
        cpuMsPerRecord: { warcio: Number(perRecord.warcio.toFixed(3)), dragnet: Number(perRecord.dragnet.toFixed(3)) },
        ratio: Number((perRecord.warcio / perRecord.dragnet).toFixed(1)),
    }),
);
