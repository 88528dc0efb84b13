/**
 * A process that takes a site's lock in a storage dir and holds it until it is killed:
 *   node --import tsx test/helpers/holdSiteLock.ts <storageDir> <site>
 * Prints "locked" once it holds it.
 */
import { lockSite } from '../../src/store/siteLock.js';
import { openDatabase } from '../../src/store/sqlite/database.js';

const [storageDir, site] = process.argv.slice(2);
lockSite(openDatabase(storageDir!), site!, 'crawl');
process.stdout.write('locked\n');
setInterval(() => undefined, 60_000);
