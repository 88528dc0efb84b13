/**
 * Serves saved pages on loopback so a site can be crawled offline:
 *   npm run serve-fixtures -- test/fixtures/quotes.toscrape.com [port]
 * then, in another terminal, `npm start -- --site quotes-toscrape --start-url http://127.0.0.1:<port>/`.
 */
import { startStaticSite } from './static.js';

const [rootDir = 'test/fixtures/quotes.toscrape.com', port = '8000'] = process.argv.slice(2);
const site = await startStaticSite(rootDir, { port: Number(port) });
process.stdout.write(`serving ${rootDir} at ${site.url}/ (Ctrl+C to stop)\n`);
process.once('SIGINT', () => void site.close().then(() => process.exit(0)));
