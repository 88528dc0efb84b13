/**
 * Checks what an extractor returned against its route's schema. The verdict decides
 * whether a page goes to the dataset, to the browser, or to quarantine.
 */
import type { CheerioAPI } from 'cheerio';
import type { Extracted, PageContext, Route } from '../site.js';

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
}

/** Validates every record of a page. */
export function validatePage(route: Route, extracted: Extracted<unknown>): Verdict {
    const records = extracted == null ? [] : Array.isArray(extracted) ? extracted : [extracted];
    const verdict: Verdict = { valid: [], invalid: [] };
    for (const record of records) {
        const result = route.schema ? route.schema.safeParse(record) : { success: true as const, data: record };
        if (result.success) {
            verdict.valid.push(result.data as Record<string, unknown>);
        } else {
            const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(record)'}: ${issue.message}`);
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

/** Runs the extractor; an extractor that throws makes the page invalid rather than crashing the run. */
export function extractAndValidate(route: Route, $: CheerioAPI, context: PageContext): Verdict {
    if (!route.extract) return validatePage(route, []);
    try {
        return validatePage(route, route.extract($, context));
    } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { valid: [], invalid: [{ record: null, issues: [`extract threw: ${message}`], fields: ['(extract)'] }] };
    }
}

/** The fields a page failed on, for counts and the drift breaker; `(records)` for too few records. */
export function failingFields(verdict: Verdict): string[] {
    const fields = verdict.invalid.flatMap((invalid) => invalid.fields);
    return verdict.shortfall ? [...fields, '(records)'] : fields;
}
