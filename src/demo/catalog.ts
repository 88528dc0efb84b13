/**
 * The fixture shop's generated data: categories, products and dead links, all derived from
 * one seed so a test knows the truth about every page before it crawls a single one.
 *
 * Everything random comes from one mulberry32 stream consumed in a fixed order, so the same
 * options always give the same catalog (and a different seed gives a different one). Options
 * added later (persistent failures, Retry-After products) draw from streams of their own, derived
 * from the same seed, so turning them on never shifts the main stream's draws (random.ts).
 */
import { slugify } from './html.js';
import { inTurn, mulberry32, pick, pickShare, type Random, sampleOthers, shuffled, substream } from './random.js';
import { ADJECTIVES, CATEGORY_NAMES, MATERIALS, NOUNS, PLACES, QUALITIES } from './words.js';

export interface ProductTruth {
    id: number;
    slug: string;
    /** Canonical path, e.g. `/products/rustic-steel-lamp-42` (`/premium/items/...` in the hard category). */
    path: string;
    title: string;
    price: number;
    currency: 'USD';
    /** `SKU-000042` */
    sku: string;
    availability: 'in_stock' | 'out_of_stock';
    /** 0 when out of stock. */
    stock: number;
    description: string;
    /** The category's display name, as the breadcrumb shows it. */
    category: string;
    /** Title and price are filled in only by an inline script. */
    scriptOnly: boolean;
    /**
     * The first request to `path` fails (503, connection reset or hang; see `CatalogOptions.transientFailureKinds`).
     */
    transientFailure: boolean;
}

/**
 * How a product's first request fails: `'503'` answers 503, `'reset'` destroys the socket without
 * a response, `'hang'` accepts the request and never answers.
 */
export type TransientFailure = '503' | 'reset' | 'hang';

export interface Category {
    name: string;
    slug: string;
    /** Path of page 1, e.g. `/category/kitchen` (`/premium/<slug>` for the hard category). */
    path: string;
    /** The anti-bot mode's "hard" category (`CatalogOptions.hardCategory`): blocked from datacenter addresses. */
    hard: boolean;
    products: ProductTruth[];
    pageCount: number;
}

/** A listing card pointing at a product that does not exist (any more), or (503) at one that always fails. */
export interface DeadLink {
    path: string;
    /** 404 or 410 for a product that does not exist; 503 for a persistent failure. */
    status: 404 | 410 | 503;
    title: string;
    price: number;
    /** Where the card sits: category slug, listing page (1-based) and card position on it. */
    categorySlug: string;
    page: number;
    position: number;
}

export interface CatalogOptions {
    seed: number;
    products: number;
    categories: number;
    productsPerPage: number;
    scriptOnlyRate: number;
    transientFailureRate: number;
    /** The kinds the transiently failing products cycle through, in pick order. */
    transientFailureKinds: readonly TransientFailure[];
    notFoundLinks: number;
    /** Listing-page links to `/products/broken-<n>`, which always answer 503. */
    persistentFailures: number;
    /** Share of all products (taken from those without a transient failure) whose first request gets Retry-After. */
    retryAfterRate: number;
    /**
     * The last category is "hard": its listings at `/premium/<slug>`, its products at
     * `/premium/items/<slug>-<id>`. Only paths change, so no random draw shifts. Default: false.
     */
    hardCategory?: boolean;
}

export interface Catalog {
    categories: Category[];
    products: ProductTruth[];
    /** Products the home page features (through the `/p/<id>` alias). */
    featured: ProductTruth[];
    /** Each product's "Related products", by id. */
    related: Map<number, ProductTruth[]>;
    /** How each transiently failing product path fails. */
    transientFailures: Map<string, TransientFailure>;
    deadLinks: DeadLink[];
    /** Listing cards whose path always answers 503 (`status` 503). */
    persistentFailures: DeadLink[];
    /** Product paths whose first request is answered with a Retry-After header; none fails transiently. */
    retryAfterPaths: string[];
}

const FEATURED_COUNT = 5;
const RELATED_COUNT = 3;
/** Share of products that are out of stock. */
const OUT_OF_STOCK_RATE = 0.15;
/** Ids of the separate random streams (see `substream`). */
const PERSISTENT_FAILURE_STREAM = 1;
const RETRY_AFTER_STREAM = 2;

export function buildCatalog(options: CatalogOptions): Catalog {
    const random = mulberry32(options.seed);
    const categories = buildCategories(options.categories);
    const scriptOnly = new Set(pickShare(random, options.products, options.scriptOnlyRate));
    const failing = pickShare(random, options.products, options.transientFailureRate);
    const failingIds = new Set(failing);

    const products: ProductTruth[] = [];
    for (let id = 1; id <= options.products; id++) {
        // Round-robin keeps the categories within one product of each other in size.
        const category = inTurn(categories, id - 1);
        const product = buildProduct(random, id, category.name, scriptOnly.has(id), failingIds.has(id));
        products.push(product);
        category.products.push(product);
    }
    for (const category of categories) {
        category.pageCount = Math.max(1, Math.ceil(category.products.length / options.productsPerPage));
    }
    if (options.hardCategory) {
        const last = categories.at(-1);
        if (!last) throw new RangeError('a hard category needs a category to make hard');
        makeHard(last);
    }

    const kinds = options.transientFailureKinds;
    const productWith = (id: number) => {
        const product = products[id - 1];
        if (!product) throw new RangeError(`no product ${id} of ${products.length}`);
        return product;
    };
    return {
        categories,
        products,
        featured: shuffled(random, products).slice(0, FEATURED_COUNT),
        related: pickRelated(random, categories, products),
        // Cycle through the kinds in pick order, so ['503', 'reset'] splits the failures half and half.
        transientFailures: new Map(failing.map((id, i) => [productWith(id).path, inTurn(kinds, i)])),
        deadLinks: placeDeadLinks(random, categories, options),
        persistentFailures: placePersistentFailures(
            substream(options.seed, PERSISTENT_FAILURE_STREAM),
            categories,
            options,
        ),
        retryAfterPaths: pickRetryAfter(
            substream(options.seed, RETRY_AFTER_STREAM),
            products,
            failingIds,
            options.retryAfterRate,
        ),
    };
}

function buildCategories(count: number): Category[] {
    return Array.from({ length: count }, (_, i) => {
        const round = Math.floor(i / CATEGORY_NAMES.length);
        const base = inTurn(CATEGORY_NAMES, i);
        const name = round === 0 ? base : `${base} ${round + 1}`;
        const slug = slugify(name);
        return { name, slug, path: `/category/${slug}`, hard: false, products: [], pageCount: 1 };
    });
}

/** Moves a category and its products under `/premium/` (before any path is used as a key). */
function makeHard(category: Category): void {
    category.hard = true;
    category.path = `/premium/${category.slug}`;
    for (const product of category.products) product.path = productPathIn(category, product);
}

/** A product's canonical path in `category`: `/products/<slug>-<id>`, `/premium/items/<slug>-<id>` when it is hard. */
export function productPathIn(category: Pick<Category, 'hard'>, product: Pick<ProductTruth, 'slug' | 'id'>): string {
    return `${category.hard ? '/premium/items' : '/products'}/${product.slug}-${product.id}`;
}

/** The product `id` of `products`, which a catalog keeps in id order; undefined when it has none (any more). */
export function productById(products: readonly ProductTruth[], id: number): ProductTruth | undefined {
    let low = 0;
    let high = products.length - 1;
    while (low <= high) {
        const middle = (low + high) >> 1;
        const product = products[middle];
        if (!product) break;
        if (product.id === id) return product;
        if (product.id < id) low = middle + 1;
        else high = middle - 1;
    }
    return undefined;
}

export function buildProduct(
    random: Random,
    id: number,
    category: string,
    scriptOnly: boolean,
    transientFailure: boolean,
): ProductTruth {
    const adjective = pick(random, ADJECTIVES);
    const material = pick(random, MATERIALS);
    const noun = pick(random, NOUNS);
    const title = `${adjective} ${material} ${noun}`;
    const slug = slugify(title);
    const stock = random() < OUT_OF_STOCK_RATE ? 0 : 1 + Math.floor(random() * 250);
    return {
        id,
        slug,
        path: `/products/${slug}-${id}`,
        title,
        price: randomPrice(random),
        currency: 'USD',
        sku: `SKU-${String(id).padStart(6, '0')}`,
        availability: stock > 0 ? 'in_stock' : 'out_of_stock',
        stock,
        description: describe(random, material, noun),
        category,
        scriptOnly,
        transientFailure,
    };
}

/** 1.00 to 999.99, whole cents. */
export function randomPrice(random: Random): number {
    return (100 + Math.floor(random() * 99_900)) / 100;
}

/** One to three sentences. */
function describe(random: Random, material: string, noun: string): string {
    const [first, ...others] = [
        `This ${noun.toLowerCase()} is made of ${material.toLowerCase()} and is ${pick(random, QUALITIES)}.`,
        `It fits right in ${pick(random, PLACES)}.`,
        `Each piece is inspected by hand before it ships.`,
        `Pairs well with anything else in ${material.toLowerCase()}.`,
    ] as const;
    const count = 1 + Math.floor(random() * 3);
    return [first, ...shuffled(random, others).slice(0, count - 1)].join(' ');
}

/** For each product, three others from its own category (from the whole shop when the category is too small). */
function pickRelated(random: Random, categories: Category[], products: ProductTruth[]): Map<number, ProductTruth[]> {
    const categoryOf = new Map(categories.map((category) => [category.name, category]));
    const related = new Map<number, ProductTruth[]>();
    for (const product of products) {
        const category = categoryOf.get(product.category);
        if (!category) throw new Error(`product ${product.id} is in no category of the shop (${product.category})`);
        related.set(product.id, pickRelatedOf(random, product, category.products, products));
    }
    return related;
}

/** Three products other than `product` from its category (`sameCategory`), from all `products` when that is too small. */
export function pickRelatedOf(
    random: Random,
    product: ProductTruth,
    sameCategory: readonly ProductTruth[],
    products: readonly ProductTruth[],
): ProductTruth[] {
    const pool = sameCategory.length > RELATED_COUNT ? sameCategory : products;
    return sampleOthers(random, pool, RELATED_COUNT, product);
}

/**
 * Spreads the dead links evenly over all listing pages (in category, then page order), each at
 * a random position among the page's cards. The last one answers 410 Gone when there are two
 * or more, the rest 404.
 */
function placeDeadLinks(random: Random, categories: Category[], options: CatalogOptions): DeadLink[] {
    const count = options.notFoundLinks;
    return placeListingLinks(random, categories, options, count, (i) => ({
        path: `/products/discontinued-${i + 1}`,
        status: count >= 2 && i === count - 1 ? 410 : 404,
    }));
}

/**
 * The persistent failures, `/products/broken-<n>` (n from 1), placed like the dead links (evenly
 * over the listing pages, at a random position among the product cards); they always answer 503.
 */
function placePersistentFailures(random: Random, categories: Category[], options: CatalogOptions): DeadLink[] {
    return placeListingLinks(random, categories, options, options.persistentFailures, (i) => ({
        path: `/products/broken-${i + 1}`,
        status: 503,
    }));
}

/** `count` cards spread evenly over all listing pages, each with a random title, price and position. */
function placeListingLinks(
    random: Random,
    categories: Category[],
    options: CatalogOptions,
    count: number,
    target: (i: number) => Pick<DeadLink, 'path' | 'status'>,
): DeadLink[] {
    const pages = categories.flatMap((category) =>
        Array.from({ length: category.pageCount }, (_, i) => ({ category, page: i + 1 })),
    );
    return Array.from({ length: count }, (_, i) => {
        const listing = pages[Math.floor((i * pages.length) / count)];
        if (!listing) throw new RangeError('listing links need a listing page to go on');
        const { category, page } = listing;
        const cardsOnPage = category.products.slice(
            (page - 1) * options.productsPerPage,
            page * options.productsPerPage,
        ).length;
        return {
            ...target(i),
            title: `${pick(random, ADJECTIVES)} ${pick(random, MATERIALS)} ${pick(random, NOUNS)}`,
            price: randomPrice(random),
            categorySlug: category.slug,
            page,
            position: Math.floor(random() * (cardsOnPage + 1)),
        };
    });
}

/**
 * `Math.round(rate * products.length)` product paths (at most as many as there are products
 * without a transient failure), none of them failing transiently, in random order.
 */
function pickRetryAfter(
    random: Random,
    products: ProductTruth[],
    failingIds: ReadonlySet<number>,
    rate: number,
): string[] {
    if (rate === 0) return [];
    const candidates = products.filter((p) => !failingIds.has(p.id));
    return shuffled(random, candidates)
        .slice(0, Math.round(rate * products.length))
        .map((p) => p.path);
}
