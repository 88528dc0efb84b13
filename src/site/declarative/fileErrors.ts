/**
 * Where in a site file a problem is. The file is parsed with the `yaml` package, which reads JSON
 * too (JSON is YAML), keeping the offset of every key and value, so that a problem the file
 * format's schema finds at a path of keys is reported where that path leads:
 * `routes/shop.yaml:12:7: routes.book.fields.title: unknown key "selecter"`. One problem, one
 * line (a ConfigError): the first in the file, except that an unknown key goes before anything
 * else, since it is the likely cause of the rest (`selecter:` is why `selector` is missing).
 */
import { isAbsolute, relative } from 'node:path';
import { type Document, isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../../options/configError.js';

/** A site file's text, parsed, with what is needed to say where a problem is. */
export interface ParsedSiteFile {
    file: string;
    document: Document;
    lineCounter: LineCounter;
    /** What the file holds, as plain data for the schema. */
    data: unknown;
}

type Path = readonly PropertyKey[];

interface Problem {
    /** The key path of the value, or of the object, the problem is in. */
    path: Path;
    message: string;
    /** Set when the problem is a key of that object the format does not know. */
    unknownKey?: string;
    /** Set when the object lacks a key: the problem is reported at the object's own key. */
    missing?: true;
}

/** The file's text parsed; a syntax error (or a duplicate key) is a ConfigError at its line. */
export function parseSiteFile(file: string, text: string): ParsedSiteFile {
    const lineCounter = new LineCounter();
    const document = parseDocument(text, { lineCounter, prettyErrors: false });
    const [error] = document.errors;
    if (error) throw new ConfigError(`${location(file, lineCounter, error.pos[0])}: ${error.message.split('\n')[0]}`);
    try {
        return { file, document, lineCounter, data: document.toJS() };
    } catch (error) {
        // toJS refuses aliases that would expand past a limit (a "billion laughs" file).
        throw new ConfigError(`${shownPath(file)}: ${(error as Error).message}`);
    }
}

/** The first of the schema's issues with the file, as a one-line ConfigError at its line and column. */
export function siteFileError(parsed: ParsedSiteFile, issues: readonly z.core.$ZodIssue[]): ConfigError {
    const located = problemsIn(issues, [], parsed.data).map((problem) => ({
        problem,
        offset: offsetOf(parsed.document, problem),
    }));
    located.sort(
        (a, b) =>
            Number(b.problem.unknownKey !== undefined) - Number(a.problem.unknownKey !== undefined) ||
            a.offset - b.offset,
    );
    const first = located[0];
    if (!first) throw new Error(`${parsed.file}: the site schema refused the file without saying why`);
    const { problem, offset } = first;
    const path = problem.path.length > 0 ? `${formatPath(problem.path)}: ` : '';
    return new ConfigError(`${location(parsed.file, parsed.lineCounter, offset)}: ${path}${problem.message}`);
}

/**
 * The problems the issues describe. A union (a field is a selector or an object) fails with an
 * issue per alternative; the alternative meant is the only one that takes the value's type, and
 * its issues are the ones to report (`unknown key`, not `expected string`). When no single one
 * does, the union's own message says what the value may be.
 */
function problemsIn(issues: readonly z.core.$ZodIssue[], base: Path, data: unknown): Problem[] {
    return issues.flatMap((issue): Problem[] => {
        const path = [...base, ...issue.path];
        if (issue.code === 'invalid_union') {
            const meant = issue.errors.filter(
                (branch) => !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
            );
            const [only] = meant;
            return meant.length === 1 && only ? problemsIn(only, path, data) : [{ path, message: issue.message }];
        }
        if (issue.code === 'unrecognized_keys')
            return issue.keys.map((key) => ({ path, unknownKey: key, message: `unknown key "${key}"` }));
        if (issue.code === 'invalid_type' && isMissing(data, path))
            return [{ path: path.slice(0, -1), missing: true, message: `missing key "${String(path.at(-1))}"` }];
        return [{ path, message: issue.message }];
    });
}

/** Whether the object at all but the last key of `path` lacks that last key. */
function isMissing(data: unknown, path: Path): boolean {
    const last = path.at(-1);
    if (last === undefined) return false;
    let value = data;
    for (const key of path.slice(0, -1)) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
    return typeof value === 'object' && value !== null && !Array.isArray(value) && !Object.hasOwn(value, last);
}

/**
 * The offset to report a problem at: the unknown key itself; the key of the object that lacks a
 * key; else the value the path leads to (or the key of the last step of it the file has).
 */
function offsetOf(document: Document, problem: Problem): number {
    let node: unknown = document.contents;
    let keyOffset = rangeStart(node) ?? 0;
    let reached = true;
    for (const step of problem.path) {
        if (isMap(node)) {
            const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(step));
            if (pair) {
                keyOffset = rangeStart(pair.key) ?? keyOffset;
                node = pair.value;
                continue;
            }
        } else if (isSeq(node) && node.items[Number(step)]) {
            node = node.items[Number(step)];
            keyOffset = rangeStart(node) ?? keyOffset;
            continue;
        }
        reached = false;
        break;
    }
    if (problem.unknownKey !== undefined && reached && isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === problem.unknownKey);
        return rangeStart(pair?.key) ?? keyOffset;
    }
    if (problem.missing || !reached) return keyOffset;
    return rangeStart(node) ?? keyOffset;
}

function rangeStart(node: unknown): number | undefined {
    return (node as { range?: [number, number, number] } | null | undefined)?.range?.[0];
}

/** `routes.book.enqueue[1].label` */
function formatPath(path: Path): string {
    return path
        .map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
        .join('');
}

/** `routes/shop.yaml:12:7` (line and column from 1). */
function location(file: string, lineCounter: LineCounter, offset: number): string {
    const { line, col } = lineCounter.linePos(offset);
    return `${shownPath(file)}:${line}:${col}`;
}

/** The file as the user would write it: relative to the working directory when it is inside it. */
export function shownPath(file: string): string {
    const inside = relative(process.cwd(), file);
    return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? file : inside;
}
