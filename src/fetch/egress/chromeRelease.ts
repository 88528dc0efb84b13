/**
 * The Chrome release a session claims, and the client-hint brands that release sends. Sessions claim
 * the release of the Chromium on this machine, so the headers of both stages name the browser whose
 * handshake the browser stage really makes (issue 49).
 */
import { execFile } from 'node:child_process';

export interface ChromeRelease {
    product: 'Chromium' | 'Google Chrome';
    /** As `--version` gives it, e.g. `156.0.8078.129`. */
    fullVersion: string;
    major: number;
}

/** One entry of `sec-ch-ua`, as CDP's user agent metadata takes it too. */
export interface Brand {
    brand: string;
    version: string;
}

/** The release claimed when there is no Chromium, so a crawl that never renders still claims a current Chrome. */
export const FALLBACK_RELEASE: ChromeRelease = { product: 'Chromium', fullVersion: '156.0.8078.129', major: 156 };

const VERSION_TIMEOUT_MS = 5_000;
const releases = new Map<string, Promise<ChromeRelease | undefined>>();

/**
 * The release of the Chromium or Chrome at `executablePath` (the run's: the one the browser stage
 * renders with), from its `--version`; undefined when it does not start or does not say. The binary
 * is run once per path in a process, without holding the thread (a distribution's wrapper script
 * can take most of a second).
 */
export function chromeRelease(executablePath: string): Promise<ChromeRelease | undefined> {
    let release = releases.get(executablePath);
    if (!release) {
        release = new Promise((resolve) =>
            execFile(
                executablePath,
                ['--version'],
                { encoding: 'utf8', timeout: VERSION_TIMEOUT_MS },
                (error, stdout) => resolve(error ? undefined : parseVersion(stdout)),
            ),
        );
        releases.set(executablePath, release);
    }
    return release;
}

/** `Chromium 156.0.8078.129 built on …` or `Google Chrome 156.0.8078.129 …` as a release. */
export function parseVersion(text: string): ChromeRelease | undefined {
    const match = /^(Chromium|Google Chrome) ((\d+)\.\d+\.\d+\.\d+)\b/m.exec(text.trim());
    if (!match) return undefined;
    const [, product, fullVersion = '', major = ''] = match;
    return { product: product === 'Chromium' ? 'Chromium' : 'Google Chrome', fullVersion, major: Number(major) };
}

// Chromium's GREASE brand and brand order, seeded by the major version (the UA-CH spec's "create
// arbitrary brands"): components/embedder_support/user_agent_utils.cc, GetGreasedUserAgentBrandVersion,
// GenerateBrandVersionList and GetRandomOrder.
const GREASE_CHARS = [' ', '(', ':', '-', '.', '/', ')', ';', '=', '?', '_'];
const GREASE_VERSIONS = ['8', '99', '24'];
/** Where the GREASE brand, Chromium and the product brand go among three brands, by seed % 6. */
const ORDERS_OF_3: [number, number, number][] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/**
 * The `sec-ch-ua` brands of `release`, in its order: a GREASE brand and Chromium, and for Google
 * Chrome its own brand too, the same for every install of a major version.
 */
export function brands(release: ChromeRelease): Brand[] {
    const seed = release.major;
    const version = String(seed);
    const [toGrease, toChromium, toProduct] =
        release.product === 'Google Chrome' ? pick(ORDERS_OF_3, seed) : ([seed % 2, (seed + 1) % 2] as const);
    const listed: Brand[] = [];
    listed[toGrease] = {
        brand: `Not${pick(GREASE_CHARS, seed)}A${pick(GREASE_CHARS, seed + 1)}Brand`,
        version: pick(GREASE_VERSIONS, seed),
    };
    listed[toChromium] = { brand: 'Chromium', version };
    if (toProduct !== undefined) listed[toProduct] = { brand: release.product, version };
    return listed;
}

/** The `sec-ch-ua` header of a brand list. */
export function secChUa(list: readonly Brand[]): string {
    return list.map(({ brand, version }) => `"${brand}";v="${version}"`).join(', ');
}

/** `list[seed % list.length]`, as Chromium picks from its lists. */
function pick<T>(list: readonly T[], seed: number): T {
    return list[seed % list.length] as T;
}
