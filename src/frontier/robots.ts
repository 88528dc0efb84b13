/**
 * robots.txt, checked before a URL enters the frontier: a disallowed URL is never queued.
 * One robots.txt per origin, fetched once per run (Crawlee's RobotsTxtFile, robots-parser inside).
 */
import { RobotsTxtFile } from '@crawlee/utils';

export interface RobotsPolicyOptions {
    /** The user agent matched against robots.txt groups. Default: `*`. */
    userAgent?: string;
    /** How long to wait for a robots.txt. Default: 10 000 ms; on failure everything is allowed. */
    timeoutMillis?: number;
}

export class RobotsPolicy {
    private readonly files = new Map<string, Promise<RobotsTxtFile | undefined>>();
    private readonly userAgent: string;
    private readonly timeoutMillis: number;

    constructor(options: RobotsPolicyOptions = {}) {
        this.userAgent = options.userAgent ?? '*';
        this.timeoutMillis = options.timeoutMillis ?? 10_000;
    }

    async isAllowed(url: URL): Promise<boolean> {
        let file = this.files.get(url.origin);
        if (!file) {
            file = RobotsTxtFile.find(url.href, undefined, { timeoutMillis: this.timeoutMillis }).catch(() => undefined);
            this.files.set(url.origin, file);
        }
        return (await file)?.isAllowed(url.href, this.userAgent) ?? true;
    }
}
