/**
 * What `--help` makes from the option table (src/options/options.ts), and the table's own rules: a
 * flag and a variable per option, defaults its schemas accept. (The files made from it are checked
 * with the other generated files, test/docs/generated.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { helpText, parseCommandLine, shownDefault } from '../../src/options/config.js';
import { ConfigError } from '../../src/options/configError.js';
import { ENVIRONMENT_ONLY, OPTIONS } from '../../src/options/options.js';
import type { OptionSpec } from '../../src/options/optionSpec.js';

const specs: OptionSpec[] = Object.values(OPTIONS);

describe('the option table', () => {
    it('--help lists every option with its doc, default and variable', () => {
        const lines = helpText().split('\n');
        for (const spec of specs) {
            const line = lines.find((candidate) => candidate.startsWith(`  --${spec.flag} `));
            assert.ok(line, `--${spec.flag} is in --help`);
            assert.ok(line.includes(spec.doc), `--${spec.flag}: ${line}`);
            assert.ok(line.includes(`env: ${spec.env}`), `--${spec.flag}: ${line}`);
            const byDefault = shownDefault(spec);
            if (byDefault !== undefined) assert.ok(line.includes(`default: ${byDefault}`), `--${spec.flag}: ${line}`);
        }
    });

    it("--help lists the environment-only variables apart, not as an option's `env:`", () => {
        const text = helpText();
        for (const variable of ENVIRONMENT_ONLY) {
            assert.match(text, new RegExp(`^  ${variable.env} +${variable.doc.replace(/[()./]/g, '\\$&')}`, 'm'));
            assert.doesNotMatch(text, new RegExp(`env: ${variable.env}\\b`));
        }
    });

    it('gives every option its own flag and variable, and a default its own schema accepts', () => {
        assert.equal(new Set(specs.map((spec) => spec.flag)).size, specs.length);
        assert.equal(new Set(specs.map((spec) => spec.env)).size, specs.length);
        for (const spec of specs) {
            if (spec.default !== undefined)
                assert.ok(
                    spec.schema.safeParse(spec.default).success,
                    `--${spec.flag}'s default ${String(spec.default)}`,
                );
        }
    });
});

describe("the other commands' shared flags", () => {
    const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
        parseCommandLine(argv, env, ['site', 'storageDir'], { limit: { type: 'string' } });

    it('read as `npm start` reads them: flag over variable over default, an empty variable unset', () => {
        assert.deepEqual(parse([]), { options: { site: 'demo-shop', storageDir: './storage' }, flags: {} });
        assert.deepEqual(parse(['--limit', '3'], { DRAGNET_SITE: 'books-toscrape', DRAGNET_STORAGE_DIR: '' }), {
            options: { site: 'books-toscrape', storageDir: './storage' },
            flags: { limit: '3' },
        });
        assert.deepEqual(
            parse(['--site', 'quotes-toscrape', '--storage-dir', '/data'], { DRAGNET_SITE: 'books-toscrape' }),
            {
                options: { site: 'quotes-toscrape', storageDir: '/data' },
                flags: {},
            },
        );
    });

    it('refuse what `npm start` refuses, in one line naming the flag; --help wins', () => {
        assert.throws(
            () => parse(['--storage-dir', '']),
            (error: unknown) => error instanceof ConfigError && error.message === '--storage-dir must not be empty',
        );
        assert.throws(
            () => parse(['--max-concurrency', '3']),
            (error: unknown) =>
                error instanceof ConfigError && /^Unknown option '--max-concurrency'/.test(error.message),
        );
        assert.equal(parse(['--help', '--storage-dir', '']), 'help');
    });
});
