/**
 * CSS selectors compiled once per run, by their text. cheerio parses and compiles a selector anew
 * on every `$(selector)` and `.find(selector)`: on a real-weight product page (~15 KB, 180 links)
 * a first match took 60-140 µs through `$(`…`:first`)` and 17-48 µs compiled once, and two
 * `$(selector)` calls of the demo route were ~6% of the crawling thread.
 */
import { compile, selectAll } from 'css-select';
import { type AnyNode, type Element, hasChildren } from 'domhandler';

export type CompiledSelector = ReturnType<typeof compile>;

const compiledSelectors = new Map<string, CompiledSelector | null>();
/** A site has a few dozen selectors; the cap only bounds a route that builds them from page data. */
const MAX_COMPILED_SELECTORS = 1_000;

/**
 * Selectors that only mean something relative to the elements searched from: one that starts with
 * a combinator (`> li`, `+ p`, `~ p`, also after a comma) or names `:scope`. cheerio matches them
 * against its context; compiled alone they would match against the document.
 */
const RELATIVE_SELECTOR = /(?:^|,)\s*[>+~]|:scope/i;

/**
 * `selector` compiled by css-select (what cheerio runs underneath), or null for one to leave to
 * cheerio: a relative selector, a positional pseudo-class only cheerio knows (`:first`, `:eq(n)`,
 * `:last`…), or text that is no selector (cheerio then reports it, or reads it as HTML).
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

/** The elements `query` matches in the trees under `roots` (the roots themselves are never a match), in document order. */
export function selectUnder(query: CompiledSelector, roots: readonly AnyNode[]): Element[] {
    // css-select's selectAll walks with a stack of its own, so a deeply nested page is no danger here.
    return selectAll(query, childrenOf(roots)) as Element[];
}

/** The children of each of `roots`, in order: where a search under them starts. */
export function childrenOf(roots: readonly AnyNode[]): AnyNode[] {
    return roots.flatMap((node) => (hasChildren(node) ? node.children : []));
}
