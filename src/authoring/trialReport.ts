/**
 * `npm run try`'s terminal output: per page tried, its records field by field with the schema's
 * verdict, whether it would go to the browser, and its links by rule and fate; for a page tried both
 * ways (`--render`), the fields of the cheap fetch and of the browser side by side.
 */
import type { FieldVerdict, LinkFate, PageTrial } from './pageTrial.js';

/** Links shown per rule and fate; `--json` has them all. */
const LINKS_SHOWN = 5;
const FATES: LinkFate[] = ['follow', 'offsite', 'duplicate', 'invalid'];

export function formatTrial(trial: PageTrial, fetched?: string): string {
    const lines = [
        `${trial.renderer === 'http' ? 'cheap fetch' : 'browser'}: ${trial.url} → ` +
            `route ${trial.label}${fetched ? ` (${fetched})` : ''}`,
    ];
    if (trial.canonical && trial.canonical !== trial.url) lines.push(`  canonical    ${trial.canonical}`);
    const passed = trial.records.length;
    lines.push(
        `  records      ${trial.fields.length} extracted, ${passed} ${passed === 1 ? 'passes' : 'pass'} the schema`,
    );
    trial.fields.forEach((fields, index) => {
        if (trial.fields.length > 1) lines.push(`  record ${index + 1}`);
        for (const field of fields) lines.push(`    ${fieldLine(field)}`);
    });
    lines.push(`  verdict      ${verdictLine(trial)}`);
    const labels = [...new Set(trial.links.map((link) => link.label))];
    lines.push(
        `  links        ${labels.length === 0 ? 'none (no enqueue rule found any)' : `${trial.links.length} found`}`,
    );
    for (const label of labels) {
        const ofLabel = trial.links.filter((link) => link.label === label);
        const counts = FATES.map((fate) => [fate, ofLabel.filter((link) => link.fate === fate).length] as const).filter(
            ([, count]) => count > 0,
        );
        lines.push(`    → ${label}: ${counts.map(([fate, count]) => `${count} ${fate}`).join(', ')}`);
        for (const fate of FATES) {
            const ofFate = ofLabel.filter((link) => link.fate === fate);
            for (const link of ofFate.slice(0, LINKS_SHOWN))
                lines.push(`      ${fate.padEnd(9)} ${link.url ?? link.href}`);
            if (ofFate.length > LINKS_SHOWN) lines.push(`      ${''.padEnd(9)} … ${ofFate.length - LINKS_SHOWN} more`);
        }
    }
    return lines.join('\n');
}

/** The fields of the cheap fetch's first record beside the browser's, marked where they differ. */
export function formatSideBySide(http: PageTrial, browser: PageTrial): string {
    const cheap = http.fields[0] ?? [];
    const rendered = browser.fields[0] ?? [];
    const fields = [...new Set([...cheap, ...rendered].map((field) => field.field))];
    const width = Math.max(5, ...fields.map((field) => field.length));
    const cell = (verdict: FieldVerdict | undefined) =>
        (verdict ? `${verdict.ok ? '✓' : '✗'} ${shown(verdict.value, 34)}` : '—').padEnd(38);
    const lines = [`side by side (first record)`, `  ${'field'.padEnd(width)}  ${'cheap fetch'.padEnd(38)} browser`];
    for (const field of fields) {
        const left = cheap.find((verdict) => verdict.field === field);
        const right = rendered.find((verdict) => verdict.field === field);
        const differs = JSON.stringify(left?.value) !== JSON.stringify(right?.value);
        lines.push(`${differs ? '≠' : ' '} ${field.padEnd(width)}  ${cell(left)} ${cell(right).trimEnd()}`);
    }
    const follows = (trial: PageTrial) => trial.links.filter((link) => link.fate === 'follow').length;
    lines.push(`  ${'links'.padEnd(width)}  ${`${follows(http)} to follow`.padEnd(38)} ${follows(browser)} to follow`);
    return lines.join('\n');
}

function fieldLine({ field, value, ok, issues }: FieldVerdict): string {
    const why = issues.length > 0 ? `   ${issues.join('; ')}` : '';
    return `${ok ? '✓' : '✗'} ${field.padEnd(14)} ${shown(value, 60)}${why}`;
}

function verdictLine(trial: PageTrial): string {
    if (trial.verdict.extractorFailed)
        return `route code failed: ${trial.verdict.extractorFailed} (quarantined, not escalated)`;
    if (!trial.incomplete)
        return trial.fields.length === 0
            ? 'navigation page (no records expected)'
            : 'complete: a run stores the records';
    if (trial.escalates) return `incomplete (${trial.incomplete}): a run sends this page to the browser`;
    return (
        `incomplete (${trial.incomplete}): a run ` +
        `quarantines ${trial.renderer === 'browser' ? 'the rendered page' : 'it (its route does not render)'}`
    );
}

function shown(value: unknown, max: number): string {
    const text = value === undefined ? '(missing)' : JSON.stringify(value);
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
