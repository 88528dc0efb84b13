import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startStaticSite, type StaticSite } from './static.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/quotes.toscrape.com/', import.meta.url));

let site: StaticSite;
before(async () => {
    site = await startStaticSite(FIXTURES);
});
after(async () => {
    await site.close();
});

/** A GET with the path sent as written (fetch() would normalize `..` away before sending). */
function get(path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
    return new Promise((resolve, reject) => {
        request({ host: '127.0.0.1', port: site.port, path }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({
                    status: res.statusCode ?? 0,
                    headers: res.headers,
                    body: Buffer.concat(chunks).toString('utf8'),
                }),
            );
        })
            .on('error', reject)
            .end();
    });
}

test('a directory URL serves its index.html as utf-8 HTML', async () => {
    const res = await get('/page/2/');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.body, readFileSync(`${FIXTURES}page/2/index.html`, 'utf8'));
    assert.equal((await get('/')).body, readFileSync(`${FIXTURES}index.html`, 'utf8'));
});

test('a directory without its trailing slash redirects to it, keeping the query', async () => {
    const res = await get('/author/Albert-Einstein');
    assert.equal(res.status, 301);
    assert.equal(res.headers.location, '/author/Albert-Einstein/');
    assert.equal((await get('/login?next=1')).headers.location, '/login/?next=1');
});

test('/api/quotes?page=N serves api/quotes/page-N.json', async () => {
    const res = await get('/api/quotes?page=2');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const data = JSON.parse(res.body) as { page: number; quotes: { author: { name: string } }[] };
    assert.equal(data.page, 2);
    assert.equal(data.quotes[0]?.author.name, 'Marilyn Monroe');
    assert.equal((await get('/api/quotes?page=99')).status, 404);
    assert.equal((await get('/api/quotes?page=../1')).status, 404);
});

test('stylesheets and jQuery have their content types', async () => {
    const css = await get('/static/main.css');
    assert.equal(css.status, 200);
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');

    const jquery = await get('/static/jquery.js');
    assert.equal(jquery.status, 200);
    assert.equal(jquery.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(jquery.body, /jQuery v3/);
});

test('jQuery can be turned off', async () => {
    const bare = await startStaticSite(FIXTURES, { jquery: false });
    try {
        assert.equal((await fetch(`${bare.url}/static/jquery.js`)).status, 404);
    } finally {
        await bare.close();
    }
});

test('anything else is a 404 HTML page', async () => {
    for (const path of ['/nope/', '/page/99/', '/tableful/page/9', '/index.htm']) {
        const res = await get(path);
        assert.equal(res.status, 404, path);
        assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
        assert.match(res.body, /Not Found/);
    }
});

test('paths outside the root are refused', async () => {
    // The fixture root is test/fixtures/quotes.toscrape.com/; ../MANIFEST.md of books would be a sibling.
    for (const path of [
        '/../books.toscrape.com/MANIFEST.md',
        '/..%2fbooks.toscrape.com%2fMANIFEST.md',
        '/%2e%2e/%2e%2e/%2e%2e/package.json',
        '/static/..%2f..%2f..%2f..%2fpackage.json',
        '/%00',
    ]) {
        const res = await get(path);
        assert.equal(res.status, 404, path);
        assert.doesNotMatch(res.body, /books\.toscrape|"name"/, path);
    }
});

test('requests are recorded in order', async () => {
    const fresh = await startStaticSite(FIXTURES);
    try {
        await fetch(`${fresh.url}/page/1/`);
        await fetch(`${fresh.url}/api/quotes?page=3`);
        await fetch(`${fresh.url}/missing`);
        assert.deepEqual(fresh.requests, ['/page/1/', '/api/quotes?page=3', '/missing']);
    } finally {
        await fresh.close();
    }
});
