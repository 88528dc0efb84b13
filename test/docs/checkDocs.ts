/**
 * What can drift in the docs, found in one markdown file: a relative link or `#anchor` that leads
 * nowhere; an `npm run X` that package.json does not have; a `--flag` that the command it is given
 * to does not take (or, alone in a code span, that no command takes); a `DRAGNET_*` variable the
 * option table does not have; a path under src/, test/, bench/, vendor/, docker/ or .actor/ that is
 * not in the tree; and a date or a commit hash in prose, which is history (dates in literal output —
 * code blocks — and in generated blocks are not).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';

export interface Finding {
    /** The file, relative to the project root. */
    file: string;
    line: number;
    problem: string;
}

/** What the docs may name. */
export interface Known {
    /** The project root, which paths and links are resolved against. */
    root: string;
    /** package.json's scripts. */
    scripts: ReadonlySet<string>;
    /** The flags each command takes, by script name (`start` for `npm start`), `--help` included. */
    commandFlags: ReadonlyMap<string, ReadonlySet<string>>;
    /** The variables the option table reads, `DRAGNET_*` and the others. */
    variables: ReadonlySet<string>;
}

/** A block between `<!-- NAME: ... generated ... -->` and `<!-- NAME: end -->`. */
export const GENERATED_BLOCK = /<!-- ([\w-]+): [^>]*generated[^>]*-->[\s\S]*?<!-- \1: end -->/g;

const DATE = /\b(?:19|20)\d\d-[01]\d-[0-3]\d\b/;
const COMMIT = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/;
const FLAG = /(?<![\w-])--([a-z][a-z0-9-]*)/g;
const VARIABLE = /\bDRAGNET_[A-Z0-9_]+\b/g;
const NPM_RUN = /\bnpm run(?: -s)? ([a-z][\w:-]*)/g;
/** Paths of the tree that a user does not make: each must exist. */
const TREE_PATH = /(?<![\w./-])((?:src|test|bench|vendor|docker|\.actor|\.ci)\/[\w./-]*[\w/])/g;
/** A path with a placeholder in it (`<site>`, `NAME`, `*`) names no one file. */
const PLACEHOLDER = /[<>*{}$]|\/[A-Z][A-Z_]+(?:\/|\.|$)/;
/** Where a dragnet command is started, and the script whose flags it takes. */
const INVOCATIONS: { pattern: RegExp; script: (match: RegExpExecArray) => string }[] = [
    { pattern: /\bnpm start\b(?:[^\n]*? -- )?/, script: () => 'start' },
    { pattern: /\bnpm run(?: -s)? ([a-z][\w:-]*)\b(?:[^\n]*? -- )?/, script: (match) => match[1]! },
    { pattern: /\bsrc\/main\.ts\b/, script: () => 'start' },
    {
        pattern: /\bsrc\/commands\/(\w+)\.ts\b/,
        script: (match) => match[1]!.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`),
    },
];

interface Walked {
    /** Prose: text that is not code. */
    prose: { text: string; at: number }[];
    /** Inline code spans. */
    spans: { text: string; at: number }[];
    /** Lines of code blocks: literal output and commands. */
    codeLines: { text: string; at: number }[];
    links: { href: string; at: number }[];
    /** The anchors headings and `<a id>` give the file, in order. */
    anchors: Set<string>;
}

/** The findings of one markdown file at `file` (relative to the root). */
export function checkMarkdown(file: string, text: string, known: Known): Finding[] {
    const findings: Finding[] = [];
    const lineAt = (offset: number) => text.slice(0, Math.max(0, offset)).split('\n').length;
    const report = (at: number, problem: string) => findings.push({ file, line: lineAt(at), problem });
    const generated = [...text.matchAll(GENERATED_BLOCK)].map(
        (match) => [match.index, match.index + match[0].length] as const,
    );
    const isGenerated = (at: number) => generated.some(([start, end]) => at >= start && at < end);
    const walked = walk(text);

    for (const { href, at } of walked.links) {
        const problem = brokenLink(file, href, known.root, walked.anchors);
        if (problem) report(at, problem);
    }
    for (const { text: prose, at } of walked.prose) {
        if (isGenerated(at) || file.startsWith('docs/api/')) continue;
        const date = DATE.exec(prose);
        if (date)
            report(at, `history in prose: "${date[0]}" (a date: the past is in git, measurements in bench/results/)`);
        const commit = COMMIT.exec(prose);
        if (commit) report(at, `history in prose: "${commit[0]}" (a commit hash)`);
    }
    for (const { text: span, at } of walked.spans) {
        if (isGenerated(at) || file.startsWith('docs/api/')) continue;
        const commit = COMMIT.exec(span);
        if (commit) report(at, `history in prose: "${commit[0]}" (a commit hash)`);
    }
    const allText = [...walked.prose, ...walked.spans, ...walked.codeLines];
    for (const { text: piece, at } of allText) {
        for (const [, script] of piece.matchAll(NPM_RUN)) {
            if (!known.scripts.has(script!)) report(at, `npm run ${script}: package.json has no such script`);
        }
        for (const [variable] of piece.matchAll(VARIABLE)) {
            if (!known.variables.has(variable))
                report(at, `${variable}: no option or variable of that name (src/options/options.ts)`);
        }
    }
    for (const { text: line, at } of [...walked.spans, ...walked.codeLines]) {
        for (const problem of flagProblems(line, known)) report(at, problem);
        for (const [, path] of line.matchAll(TREE_PATH)) {
            if (!PLACEHOLDER.test(path!) && !path!.startsWith('test/fixtures/') && !existsSync(join(known.root, path!)))
                report(at, `${path}: no such file or folder`);
        }
    }
    return findings;
}

/** The flags of a code span or a code line that the command they are given to does not take. */
export function flagProblems(line: string, known: Known): string[] {
    const problems: string[] = [];
    for (const part of line.split(/&&|\|\||[|;]/)) {
        const invocation = INVOCATIONS.map(({ pattern, script }) => {
            const match = pattern.exec(part);
            return match
                ? {
                      script: script(match),
                      after: part.slice(match.index + match[0].length),
                      npm: match[0].startsWith('npm'),
                  }
                : undefined;
        }).find(Boolean);
        if (invocation) {
            const flags = known.commandFlags.get(invocation.script);
            // `npm run x -s` without ` -- `: any flags are npm's own. A script
            // that is no dragnet command (test, typecheck) is not checked.
            if (!flags || (invocation.npm && !/ -- |^-- /.test(part.slice(part.search(/\bnpm\b/))))) continue;
            for (const [, flag] of invocation.after.matchAll(FLAG)) {
                if (!flags.has(flag!))
                    problems.push(
                        `--${flag}: ${invocation.script === 'start' ? 'npm start' : `npm run ${invocation.script}`} ` +
                            `takes no such flag`,
                    );
            }
        } else if (/^\s*--[a-z]/.test(part)) {
            const flag = FLAG.exec(part.trim());
            FLAG.lastIndex = 0;
            const anyCommand = [...known.commandFlags.values()].some((flags) => flags.has(flag![1]!));
            if (!anyCommand) problems.push(`--${flag![1]}: no dragnet command takes such a flag`);
        }
    }
    return problems;
}

/** Why a link leads nowhere, or undefined. External links are not followed. */
function brokenLink(file: string, href: string, root: string, ownAnchors: Set<string>): string | undefined {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined;
    const [path = '', anchor] = href.split('#') as [string, string | undefined];
    const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
    if (relative(root, join(root, target)).startsWith('..')) return `${href}: leads out of the project`;
    if (path !== '' && !existsSync(join(root, target))) return `${href}: no such file`;
    if (anchor === undefined || anchor === '') return undefined;
    const anchors =
        path === ''
            ? ownAnchors
            : target.endsWith('.md')
              ? walk(readFileSync(join(root, target), 'utf8')).anchors
              : undefined;
    if (anchors && !anchors.has(anchor))
        return `${href}: ${path === '' ? 'this page' : target} has no heading #${anchor}`;
    return undefined;
}

/** The prose, code, links and anchors of a markdown text, each with its offset in the text. */
function walk(text: string): Walked {
    const walked: Walked = { prose: [], spans: [], codeLines: [], links: [], anchors: new Set() };
    const slugger = new GithubSlugger();
    let offset = 0;
    for (const block of new Lexer().lex(text)) {
        const start = text.indexOf(block.raw, offset);
        const blockAt = start < 0 ? offset : start;
        visit(block, blockAt);
        offset = blockAt + block.raw.length;
    }
    return walked;

    function visit(token: Token, blockAt: number): void {
        const at = (raw: string) => {
            const found = text.indexOf(raw, blockAt);
            return found < 0 ? blockAt : found;
        };
        switch (token.type) {
            case 'code': {
                let lineAt = at(token.raw) + Math.max(0, token.raw.indexOf(token.text));
                for (const line of token.text.split('\n')) {
                    walked.codeLines.push({ text: line, at: lineAt });
                    lineAt += line.length + 1;
                }
                return;
            }
            case 'codespan':
                walked.spans.push({ text: token.text, at: at(token.raw) });
                return;
            case 'text':
            case 'escape':
                if ('tokens' in token && token.tokens) break;
                walked.prose.push({ text: token.text, at: at(token.raw) });
                return;
            case 'link':
            case 'image':
                walked.links.push({ href: (token as Tokens.Link).href, at: at(token.raw) });
                break;
            case 'html':
                for (const [, id] of token.raw.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) walked.anchors.add(id!);
                return;
            case 'heading':
                walked.anchors.add(slugger.slug(plainText(token.tokens ?? [])));
                break;
        }
        for (const child of childrenOf(token)) visit(child, blockAt);
    }
}

/** The tokens inside a token: its inline tokens, a list's items, a table's cells. */
function childrenOf(token: Token): Token[] {
    if (token.type === 'list') return (token as Tokens.List).items;
    if (token.type === 'table') {
        const table = token as Tokens.Table;
        return [...table.header, ...table.rows.flat()].flatMap((cell) => cell.tokens);
    }
    return 'tokens' in token && Array.isArray(token.tokens) ? token.tokens : [];
}

/** A heading's text as GitHub reads it for its anchor: what shows, without the markup. */
function plainText(tokens: Token[]): string {
    return tokens
        .map((token) => {
            if (token.type === 'html') return '';
            if ('tokens' in token && Array.isArray(token.tokens) && token.tokens.length > 0)
                return plainText(token.tokens);
            return 'text' in token ? String(token.text) : '';
        })
        .join('');
}
