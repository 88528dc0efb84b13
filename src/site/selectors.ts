/**
 * CSS selectors as the route API (site/site.ts) and each loaded page (parse/loadedDocument.ts) run
 * them: compiled once by their text, and matched by one walk of the document that stops at a limit.
 */
import type { CheerioAPI } from 'cheerio';
import { compile } from 'css-select';
import { type AnyNode, type Document, type Element, hasChildren, isTag } from 'domhandler';
import { removeSubsets } from 'domutils';

export type CompiledSelector = ReturnType<typeof compile>;

const compiledSelectors = new Map<string, CompiledSelector | null>();
/** A site has a few dozen selectors; the cap only bounds a route that builds them from page data. */
const MAX_COMPILED_SELECTORS = 1_000;
/**
 * Selectors cheerio matches against the elements searched from, not
 * the document: `> li`, `+ p`, `~ p` (also after a comma), `:scope`.
 */
const RELATIVE_SELECTOR = /(?:^|,)\s*[>+~]|:scope/i;

/**
 * Selectors compiled once, by their text. cheerio parses and compiles a selector anew on every call:
 * on a real-weight product page a first match took 60-140 µs through `$(`…`:first`)` and 17-48 µs
 * compiled once. Null for a selector to leave to cheerio: a relative one (see RELATIVE_SELECTOR), a
 * positional pseudo-class only cheerio knows (`:first`, `:eq(n)`…), or no selector.
 */
export function compiledSelector(selector: string): CompiledSelector | null {
    let query = compiledSelectors.get(selector);
    if (query === undefined) {
        try {
            query = RELATIVE_SELECTOR.test(selector) ? null : compile(selector);
            // A selector that needs the searched elements' next siblings is relative too.
            if (query?.shouldTestNextSiblings) query = null;
        } catch {
            query = null;
        }
        if (compiledSelectors.size >= MAX_COMPILED_SELECTORS) compiledSelectors.clear();
        compiledSelectors.set(selector, query);
    }
    return query;
}

/**
 * The document `$` was loaded from: the node `$.root()` wraps, without what each call of `$()`
 * costs (two cheerio objects and two copies of the options). The demo route's parse and extraction
 * of a real-weight page took 628 µs when the route helpers and the page's URL walk called
 * `$.root()` on every use, 610 µs with this.
 */
export function documentOf($: CheerioAPI): Document {
    return $._root;
}

/**
 * The elements `query` matches under `roots` (never a root itself), in document order, up to `limit`
 * (default: all): what css-select's `selectAll` gives, roots inside other roots searched once.
 *
 * The walk keeps a stack of its own, as domutils' `find` and `findAll` do (a page nested 100,000
 * deep would overflow the call stack), but grows and shrinks it at its end: theirs shift and unshift
 * at the front, and on a real-weight product page (~750 nodes) a whole walk took 24 µs that way
 * against 5 µs this way — the most of what each of an extractor's selectors cost.
 */
export function selectUnder(query: CompiledSelector, roots: readonly AnyNode[], limit = Infinity): Element[] {
    const found: Element[] = [];
    if (limit <= 0) return found;
    const start = roots.flatMap((node) => (hasChildren(node) ? node.children : []));
    // The list being walked and the next position in it; the stacks hold those of its ancestors.
    let list: readonly AnyNode[] = roots.length > 1 ? removeSubsets(start) : start;
    let position = 0;
    const lists: (readonly AnyNode[])[] = [];
    const positions: number[] = [];
    for (;;) {
        const node = list[position];
        if (node === undefined) {
            const parent = lists.pop();
            if (parent === undefined) return found;
            list = parent;
            position = positions.pop() ?? 0;
            continue;
        }
        position += 1;
        if (!isTag(node)) continue;
        if (query(node)) {
            found.push(node);
            if (found.length === limit) return found;
        }
        if (node.children.length > 0) {
            lists.push(list);
            positions.push(position);
            list = node.children;
            position = 0;
        }
    }
}
