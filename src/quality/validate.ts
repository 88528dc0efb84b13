/**
 * Checks what an extractor returned against its route's schema. The verdict decides
 * whether a page goes to the dataset, to the browser, or to quarantine.
 */
import type { CheerioAPI } from 'cheerio';
import type { Extracted, PageContext, Route } from '../site/site.js';
import { isThenable, nonDataIn } from './extractorOutput.js';

export interface InvalidRecord {
    record: unknown;
    /** One line per problem: `price: Invalid input: expected number, received undefined`. */
    issues: string[];
    /** The top-level fields the problems are in. */
    fields: string[];
}

export interface Verdict {
    /** Records that passed, as the schema outputs them (defaults and transforms applied). */
    valid: Record<string, unknown>[];
    invalid: InvalidRecord[];
    /** Set when the page yielded fewer records than the route's `minRecords`. */
    shortfall?: string;
    /**
     * Set when the route's code failed on the page: the extractor threw, returned what is not data,
     * or ran past its time. The issue it was quarantined with, e.g. `extractor-error: …`.
     */
    extractorFailed?: string;
}

/** How route code fails on a page; each is the start of the page's quarantine issue. */
export type ExtractorFailure = 'extractor-error' | 'extractor-non-data' | 'extractor-timeout';

/** Validates every record of a page. */
export function validatePage(route: Route, extracted: Extracted<unknown>): Verdict {
    const records = extracted == null ? [] : Array.isArray(extracted) ? extracted : [extracted];
    const verdict: Verdict = { valid: [], invalid: [] };
    for (const record of records) {
        const result = route.schema ? route.schema.safeParse(record) : { success: true as const, data: record };
        if (result.success) {
            verdict.valid.push(result.data as Record<string, unknown>);
        } else {
            const issues = result.error.issues.map(
                (issue) => `${issue.path.join('.') || '(record)'}: ${issue.message}`,
            );
            const fields = [...new Set(result.error.issues.map((issue) => String(issue.path[0] ?? '(record)')))];
            verdict.invalid.push({ record, issues, fields });
        }
    }
    if (records.length < route.minRecords) {
        verdict.shortfall = `${records.length} of at least ${route.minRecords} records`;
    }
    return verdict;
}

/** True when the page is not fully valid: some record failed, or too few records came out. */
export function isIncomplete(verdict: Verdict): boolean {
    return verdict.invalid.length > 0 || verdict.shortfall !== undefined;
}

/** Why a page is incomplete, for the escalation reason and logs: `missing or invalid: title, price`. */
export function describeIncomplete(verdict: Verdict): string {
    const fields = [...new Set(verdict.invalid.flatMap((invalid) => invalid.fields))];
    const parts = [];
    if (fields.length > 0) parts.push(`missing or invalid: ${fields.join(', ')}`);
    if (verdict.shortfall) parts.push(verdict.shortfall);
    return parts.join('; ');
}

/**
 * Runs the extractor and judges its records. Route code that fails is a verdict, not an exception:
 * a throw (or a schema's refinement that throws) is `extractor-error`, a return that is not records
 * of plain data (extractorOutput.ts) is `extractor-non-data`; either way the page is quarantined
 * with the reason, and counted by the drift breaker like any invalid page.
 */
export function extractAndValidate(route: Route, $: CheerioAPI, context: PageContext): Verdict {
    if (!route.extract) return validatePage(route, []);
    try {
        const extracted: unknown = route.extract($, context);
        // An async extractor's promise is not awaited; if it rejects later, that must not be an
        // unhandled rejection, which ends the process (or the parse worker).
        if (isThenable(extracted)) extracted.then(undefined, () => undefined);
        const returned = nonDataIn(extracted);
        if (returned) return extractorFailed('extractor-non-data', returned);
        const verdict = validatePage(route, extracted as Extracted<unknown>);
        // A schema's transform can make what is not data, and a loose one lets a circular record through.
        const output = nonDataIn(verdict.valid);
        return output ? extractorFailed('extractor-non-data', `after the schema, ${output}`) : verdict;
    } catch (error) {
        return extractorFailed('extractor-error', describeError(error));
    }
}

/**
 * The verdict on a page whose route code failed: no records, one quarantine entry saying why. The
 * entry's record is null: what the code left (a Promise, a circular object) may not be storable.
 */
export function extractorFailed(failure: ExtractorFailure, detail: string): Verdict {
    const issue = `${failure}: ${detail}`;
    return { valid: [], invalid: [{ record: null, issues: [issue], fields: ['(extract)'] }], extractorFailed: issue };
}

/**
 * Whether the browser may do better than this verdict: the page is incomplete, and not because its
 * route code failed. The browser would run the same code on it — a hang would hang again, and a
 * broken extractor's cheap pages would teach the render learner that the route needs the browser.
 */
export function mayEscalate(verdict: Verdict): boolean {
    return isIncomplete(verdict) && verdict.extractorFailed === undefined;
}

/**
 * `TypeError: Cannot read properties of undefined (reading 'trim') (at extract (file:///…/routes/shop.ts:42:17))`:
 * what failed, and where — the first frame outside the libraries (a bad selector throws in cheerio's).
 */
function describeError(error: unknown): string {
    try {
        if (!(error instanceof Error)) return `threw ${String(error)}`;
        const what =
            error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message || '(no message)';
        const frames = (error.stack ?? '')
            .split('\n')
            .map((line) => line.trim())
            .filter((line) => line.startsWith('at '));
        const frame = frames.find((line) => !line.includes('/node_modules/') && !line.includes('node:')) ?? frames[0];
        return frame ? `${what} (${frame})` : what;
    } catch {
        return 'threw something that cannot be described';
    }
}

/** The fields a page failed on, for counts and the drift breaker; `(records)` for too few records. */
export function failingFields(verdict: Verdict): string[] {
    const fields = verdict.invalid.flatMap((invalid) => invalid.fields);
    return verdict.shortfall ? [...fields, '(records)'] : fields;
}
