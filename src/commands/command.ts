/**
 * What every dragnet command shares: `.env` loading and the exit codes (0 done, 1 failed, 2 bad
 * configuration — printed as one line, no stack trace). Their flags: options/config.ts.
 */
import { config as loadDotenv } from 'dotenv';
import { ConfigError } from '../options/configError.js';
import { scrubText } from '../vocabulary/redact.js';

/** Runs a command's main function and turns its outcome into an exit code. */
export function runCommand(main: () => Promise<number>): void {
    loadDotenv({ quiet: true });
    // Piped into `head`: the reader has what it wanted; that is not a failure.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') process.exit(0);
        throw error;
    });
    main().then(
        (exitCode) => {
            process.exitCode = exitCode;
        },
        (error: unknown) => {
            // Printed past the log, so scrubbed here: a failure's message may hold a database or proxy URL.
            if (error instanceof ConfigError) {
                process.stderr.write(`dragnet: ${scrubText(error.message)}\n`);
                process.exitCode = 2;
            } else {
                process.stderr.write(
                    `dragnet: ${scrubText(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`,
                );
                process.exitCode = 1;
            }
        },
    );
}
