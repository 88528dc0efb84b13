/**
 * The fixture shop's generations (`Shop.advance`): from one catalog the next, as a live shop changes
 * between two crawls — prices change, products are added, removed, and moved to a new path — and
 * what the shop serves over them (`ShopGenerations`): the current catalog, where moved products went,
 * and when each page last changed.
 *
 * A generation is derived from the shop's seed and its number alone, so the same shop advanced the
 * same way is the same shop. The catalog it starts from is not touched: a test that kept the old
 * `Shop.products` still holds the old truth. Products keep id order, new ones after the rest.
 */
import {
    buildProduct,
    type Catalog,
    type Category,
    pickRelatedOf,
    type ProductTruth,
    productById,
    productPathIn,
    randomPrice,
} from './catalog.js';
import type { DressedCatalog } from './dressing.js';
import { inTurn, type Random, shuffled, substream } from './random.js';
import { PageTimes, wholeSecond } from './validators.js';

export interface ShopChanges {
    /** Share of the current products whose price changes, each to a price other than its old one. Default: 0.1. */
    priceChangeRate?: number;
    /**
     * New products, as a share of the current count (rounded), listed like the others; plain pages (no
     * script-only title, no first-request failure). Default: 0.03.
     */
    newRate?: number;
    /** Share of the current products removed: their page answers 404 and nothing links them. Default: 0.02. */
    removedRate?: number;
    /**
     * Share of the current products moved to a new path (`…-v<generation>`): the old path answers 301 to
     * it, and every page and sitemap links the new one. Products with a first-request failure stay put.
     * Default: 0.01.
     */
    movedRate?: number;
    /**
     * `'random'`: each generation draws its own products to change. `'fixed'`: the price changes hit
     * the same products every generation — the first `priceChangeRate` share of them in an order
     * seeded once for the shop. Removed and moved products are drawn from the others. Default: `'random'`.
     */
    changeSet?: 'random' | 'fixed';
}

/** What one `advance` changed, as ground truth for tests; every list in id order, the sets disjoint. */
export interface CatalogChanges {
    /** Products whose extracted fields changed, named as the demo-shop route extracts them (`price`: a number). */
    changed: Array<{ path: string; fields: Record<string, { old: unknown; new: unknown }> }>;
    /** Paths of the new products. */
    added: string[];
    /** Paths of the products removed. */
    removed: string[];
    /** Products moved: their old and their new path. */
    moved: Array<{ from: string; to: string }>;
    /**
     * Every page whose bytes changed or that is new (`/`, listing paths as `Shop.listingPaths` has them,
     * product paths): a page not in it is served exactly as before.
     */
    pages: string[];
}

const RATES = ['priceChangeRate', 'newRate', 'removedRate', 'movedRate'] as const;
/** Random stream of generation `n` (see `substream`), clear of the catalog's and the dressing's. */
const GENERATION_STREAM_BASE = 0x100000;
/** Salt of the seed whose streams order the products once for the `'fixed'` change set. */
const FIXED_ORDER_SALT = 0x5bd1e995;

export function resolveChanges(changes: ShopChanges = {}): Required<ShopChanges> {
    const resolved: Required<ShopChanges> = {
        priceChangeRate: changes.priceChangeRate ?? 0.1,
        newRate: changes.newRate ?? 0.03,
        removedRate: changes.removedRate ?? 0.02,
        movedRate: changes.movedRate ?? 0.01,
        changeSet: changes.changeSet ?? 'random',
    };
    for (const name of RATES) {
        if (!(resolved[name] >= 0 && resolved[name] <= 1))
            throw new RangeError(`shop change ${name} must be between 0 and 1`);
    }
    if (resolved.changeSet !== 'random' && resolved.changeSet !== 'fixed')
        throw new RangeError("shop change changeSet must be 'random' or 'fixed'");
    return resolved;
}

/** What the shop serves in one generation, with the lookups its router answers from. */
export interface Served {
    catalog: DressedCatalog;
    productsByPath: Map<string, ProductTruth>;
    categoriesByPath: Map<string, Category>;
    /** Category name → slug. */
    categorySlugs: Map<string, string>;
}

/** The shop over its generations: the one served, where moved products went, when each page last changed. */
export class ShopGenerations {
    readonly pageTimes: PageTimes;
    readonly #settings: { seed: number; productsPerPage: number; origin: () => string };
    #served: Served;
    #number = 0;
    /** When the current generation began, in whole seconds. */
    #startedAt = wholeSecond(Date.now());
    /** Paths products moved from → product id; by id, so a path moved from twice ago leads to where it is now. */
    readonly #movedFrom = new Map<string, number>();

    constructor(catalog: DressedCatalog, settings: { seed: number; productsPerPage: number; origin: () => string }) {
        this.#served = indexed(catalog);
        this.#settings = settings;
        this.pageTimes = new PageTimes(this.#startedAt);
    }

    get served(): Served {
        return this.#served;
    }

    /** 0 at start, one more after each `advance`. */
    get number(): number {
        return this.#number;
    }

    /** The current path of the product that moved away from `pathname`; undefined if none did, or it is gone. */
    movedTo(pathname: string): string | undefined {
        const id = this.#movedFrom.get(pathname);
        return id === undefined ? undefined : productById(this.#served.catalog.products, id)?.path;
    }

    advance(changes?: ShopChanges): CatalogChanges {
        const { seed, productsPerPage, origin } = this.#settings;
        const old = this.#served.catalog;
        const next = nextCatalog(old, { seed, generation: this.#number + 1, productsPerPage }, changes);
        // A second at least after the last change, so a client that saw the old page never takes the new one for it.
        this.#startedAt = Math.max(wholeSecond(Date.now()), this.#startedAt + 1000);
        this.#served = indexed({ ...next.catalog, dressing: old.dressing });
        this.#number += 1;
        const render = { origin: origin(), productsPerPage };
        const pages = this.pageTimes.advance(
            { ...render, catalog: old },
            { ...render, catalog: this.#served.catalog },
            this.#startedAt,
        );
        for (const { from, to } of next.changes.moved) {
            const id = this.#served.productsByPath.get(to)?.id;
            if (id !== undefined) this.#movedFrom.set(from, id);
        }
        return { ...next.changes, pages };
    }
}

function indexed(catalog: DressedCatalog): Served {
    return {
        catalog,
        productsByPath: new Map(catalog.products.map((p) => [p.path, p])),
        categoriesByPath: new Map(catalog.categories.map((c) => [c.path, c])),
        categorySlugs: new Map(catalog.categories.map((c) => [c.name, c.slug])),
    };
}

/**
 * The catalog of generation `generation` (one more than `catalog`'s), and what changed. The products
 * whose first request fails or gets Retry-After do not move: the shop keeps those answers by path.
 */
export function nextCatalog(
    catalog: Catalog,
    options: { seed: number; generation: number; productsPerPage: number },
    changes: ShopChanges = {},
): { catalog: Catalog; changes: Omit<CatalogChanges, 'pages'> } {
    const rates = resolveChanges(changes);
    const random = substream(options.seed, GENERATION_STREAM_BASE + options.generation);
    const retryAfter = new Set(catalog.retryAfterPaths);
    const movable = (p: ProductTruth) => !catalog.transientFailures.has(p.path) && !retryAfter.has(p.path);
    const { priced, removed, moved } = pickChanged(random, catalog.products, rates, { seed: options.seed, movable });

    const newPrices = new Map([...priced].map((p) => [p.id, differentPrice(random, p.price)]));
    const kept = catalog.products.flatMap((product): ProductTruth[] => {
        if (removed.has(product)) return [];
        const price = newPrices.get(product.id);
        if (price !== undefined) return [{ ...product, price }];
        if (moved.has(product)) return [{ ...product, path: movedPath(product, options.generation) }];
        return [product];
    });
    const lastId = catalog.products.reduce((max, p) => Math.max(max, p.id), 0);
    const added = Array.from({ length: Math.round(rates.newRate * catalog.products.length) }, (_, i) => {
        const id = lastId + 1 + i;
        // Round-robin by id, as the first catalog spreads its products.
        const category = inTurn(catalog.categories, id - 1);
        const product = buildProduct(random, id, category.name, false, false);
        return { ...product, path: productPathIn(category, product) };
    });
    const products = [...kept, ...added];
    const categories = catalog.categories.map((category): Category => {
        const inCategory = products.filter((p) => p.category === category.name);
        const pageCount = Math.max(1, Math.ceil(inCategory.length / options.productsPerPage));
        return { ...category, products: inCategory, pageCount };
    });
    const current = (p: ProductTruth) => productById(products, p.id);
    const related = new Map(
        kept.map((product) => [product.id, (catalog.related.get(product.id) ?? []).flatMap((r) => current(r) ?? [])]),
    );
    for (const product of added) {
        const sameCategory = categories.find((c) => c.name === product.category)?.products ?? [];
        related.set(product.id, pickRelatedOf(random, product, sameCategory, products));
    }
    const next = {
        ...catalog,
        categories,
        products,
        featured: catalog.featured.flatMap((p) => current(p) ?? []),
        related,
    };
    return {
        catalog: next,
        changes: {
            changed: [...priced].map((product) => ({
                path: product.path,
                fields: { price: { old: product.price, new: newPrices.get(product.id) } },
            })),
            added: added.map((p) => p.path),
            removed: [...removed].map((p) => p.path),
            moved: [...moved].map((p) => ({ from: p.path, to: movedPath(p, options.generation) })),
        },
    };
}

/**
 * The products whose price changes, which are removed and which move: disjoint sets, each in id
 * order, their sizes the rates' shares of the current products.
 */
function pickChanged(
    random: Random,
    products: readonly ProductTruth[],
    rates: Required<ShopChanges>,
    { seed, movable }: { seed: number; movable: (product: ProductTruth) => boolean },
): { priced: Set<ProductTruth>; removed: Set<ProductTruth>; moved: Set<ProductTruth> } {
    const share = (rate: number) => Math.round(rate * products.length);
    const wanted = share(rates.priceChangeRate) + share(rates.removedRate) + share(rates.movedRate);
    if (wanted > products.length)
        throw new RangeError(`shop changes touch ${wanted} products of the ${products.length} there are`);
    const fixed = rates.changeSet === 'fixed' ? fixedOrder(products, seed).slice(0, share(rates.priceChangeRate)) : [];
    const fixedIds = new Set(fixed.map((p) => p.id));
    const pool = shuffled(
        random,
        products.filter((p) => !fixedIds.has(p.id)),
    );
    const priced = rates.changeSet === 'fixed' ? fixed : pool.splice(0, share(rates.priceChangeRate));
    const removed = pool.splice(0, share(rates.removedRate));
    // Fewer move when too few of the rest may.
    const moved = pool.filter(movable).slice(0, share(rates.movedRate));
    const byId = (picked: ProductTruth[]) => new Set(picked.sort((a, b) => a.id - b.id));
    return { priced: byId(priced), removed: byId(removed), moved: byId(moved) };
}

/** The shop's products in an order seeded once per shop: the same products come first every generation. */
function fixedOrder(products: readonly ProductTruth[], seed: number): ProductTruth[] {
    const orderSeed = (seed ^ FIXED_ORDER_SALT) >>> 0;
    const rank = new Map(products.map((p) => [p.id, substream(orderSeed, p.id)()]));
    return [...products].sort((a, b) => (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0));
}

/** A price drawn until it differs from `old`. */
function differentPrice(random: Random, old: number): number {
    let price = randomPrice(random);
    while (price === old) price = randomPrice(random);
    return price;
}

/** `/products/<slug>-<id>` moved in generation 3 is `/products/<slug>-<id>-v3` (same folder). */
function movedPath(product: ProductTruth, generation: number): string {
    const folder = product.path.slice(0, product.path.lastIndexOf('/'));
    return `${folder}/${product.slug}-${product.id}-v${generation}`;
}
