/**
 * The fixture shop's real-weight mode (`pageWeight: 'real'`): what a real store's pages carry
 * around the few things a scraper wants, so a bench on them costs what a real crawl costs.
 * Measured on a few real storefronts: product pages ~14 KB and listings ~23 KB of HTML, 150+
 * links each — a mega-menu of ~30 departments with their sub-links, footer columns, facets —
 * of which a crawl follows ~20; breadcrumbs, a specs table, reviews, JSON-LD, "also viewed".
 *
 * None of it is followed by the demo-shop routes or the bench's plain crawlers (other classes
 * than theirs), so the crawl graph and every extracted value are those of the light shop; only
 * the weight changes. The dressing draws from random streams of its own, so the catalog's draws
 * do not shift, and a page's dressing is derived from its product alone (no memory per product).
 */
import { type Catalog, type Category, type ProductTruth, productById } from './catalog.js';
import { escapeHtml, formatPrice, slugify } from './html.js';
import { inTurn, pick, substream, type Random } from './random.js';

/** The parts a template adds around its own content; all empty in the light shop. */
export interface Dressing {
    /** Extra `<head>` markup of every page. */
    head: string;
    /** The mega-menu, inside the header. */
    menu: string;
    /** Link columns and the newsletter form, inside the footer. */
    footer: string;
    /** A listing page's facet sidebar. */
    facets(category: Category): string;
    /** What a listing card shows beyond its link and price. */
    card(product: ProductTruth): string;
    /** What a product page of `catalog` (the generation served) shows beyond its buy box and description. */
    product(product: ProductTruth, catalog: Catalog): string;
}

export type PageWeight = 'light' | 'real';

/** The catalog as the templates see it: its data and what its pages wear. */
export type DressedCatalog = Catalog & { dressing: Dressing };

export const LIGHT_DRESSING: Dressing = {
    head: '',
    menu: '',
    footer: '',
    facets: () => '',
    card: () => '',
    product: () => '',
};

/** The departments of the mega-menu, each with `SUBS_PER_DEPARTMENT` sub-links. */
const DEPARTMENTS = [
    'Furniture',
    'Kitchen & Dining',
    'Bedding',
    'Bath',
    'Lighting',
    'Rugs',
    'Decor',
    'Storage',
    'Outdoor',
    'Garden',
    'Tools',
    'Hardware',
    'Office',
    'Kids',
    'Baby',
    'Pets',
    'Travel',
    'Sports',
    'Fitness',
    'Crafts',
    'Books',
    'Stationery',
    'Gifts',
    'Holiday',
    'Cleaning',
    'Laundry',
    'Appliances',
    'Electronics',
    'Smart Home',
    'Sale',
];
const SUBS = ['New', 'Best Sellers', 'Essentials', 'Premium', 'Under $50', 'Sets', 'Clearance', 'Gifts'];
const SUBS_PER_DEPARTMENT = 4;
const FOOTER_COLUMNS: Record<string, string[]> = {
    Help: ['Contact us', 'Shipping', 'Returns', 'Order status', 'Size guides', 'FAQ'],
    Company: ['About us', 'Careers', 'Press', 'Sustainability', 'Affiliates', 'Stores'],
};
const BRANDS = [
    'Alder & Co',
    'Brightwell',
    'Cedarline',
    'Driftwood',
    'Elmstead',
    'Fernhill',
    'Greystone',
    'Hollowoak',
    'Ironbark',
    'Juniper',
];
const COLORS = ['Black', 'White', 'Natural', 'Grey', 'Blue', 'Green', 'Red', 'Brass'];
const BADGES = ['New', 'Best seller', 'Limited', 'Eco', 'Online only'];
const REVIEWERS = [
    'Ana P.',
    'Ben K.',
    'Chloe R.',
    'Dev S.',
    'Emma L.',
    'Farid N.',
    'Grace T.',
    'Hugo M.',
    'Ines W.',
    'Jon B.',
];
const REVIEW_LINES = [
    'Arrived quickly and was packed with care; not a scratch on it.',
    'Looks even better in person than in the photos, and the finish is lovely.',
    'Assembly took about ten minutes with the included tools.',
    'Solid build. I bought a second one for my parents after a month of use.',
    'The color is a little warmer than shown, which we ended up preferring.',
    'Good value for the price, though the instructions could be clearer.',
    'Customer service answered my question the same day. Would order again.',
    'It is smaller than I expected, so check the measurements before ordering.',
];
const SPEC_NAMES = ['Width', 'Depth', 'Height', 'Weight', 'Finish', 'Care', 'Assembly', 'Warranty', 'Origin', 'Brand'];
/** Every tenth link of the menu and footer carries a campaign, as marketing tools add them. */
const CAMPAIGN_EVERY = 10;
const CAMPAIGN = 'utm_source=site&utm_medium=menu';
/** Separate random streams from the catalog's: one for the shop-wide parts, then one per product. */
const SHOP_STREAM = 0x10000;
const PRODUCT_STREAM_BASE = 0x20000;
const ALSO_VIEWED = 4;

export function dressingFor(weight: PageWeight, catalog: Catalog, seed: number): Dressing {
    return weight === 'real' ? realDressing(catalog, seed) : LIGHT_DRESSING;
}

function realDressing(catalog: Catalog, seed: number): Dressing {
    const linkCount = { value: 0 };
    const menu = megaMenu(linkCount);
    const footer = footerColumns(linkCount, substream(seed, SHOP_STREAM));
    const productStream = (product: ProductTruth) => substream(seed, PRODUCT_STREAM_BASE + product.id);
    // "Also viewed" picks ids among the first catalog's, so a later generation changes a page's picks only
    // where a picked product itself changed (Shop.advance), not every page when the product list shifts.
    const firstCount = catalog.products.length;
    return {
        head: HEAD,
        menu,
        footer,
        facets,
        card: (product) => card(product, productStream(product)),
        product: (product, served) => productDetails(served, firstCount, product, productStream(product)),
    };
}

const HEAD = `
  <meta name="description" content="Honest goods for every room, shipped from our workshop.">
  <meta property="og:site_name" content="Pinewood Supply Co.">
  <meta property="og:type" content="website">
  <link rel="preconnect" href="https://cdn.pinewood.example">
  <link rel="stylesheet" href="/assets/app.7f3a9c.css">
  <script defer src="/assets/app.7f3a9c.js"></script>`;

/** A menu or footer link; `count` numbers them so every tenth gets the campaign. */
function siteLink(count: { value: number }, cls: string, path: string, text: string): string {
    count.value += 1;
    const href = count.value % CAMPAIGN_EVERY === 0 ? `${path}?${CAMPAIGN}` : path;
    return `<a${cls ? ` class="${cls}"` : ''} href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
}

function megaMenu(count: { value: number }): string {
    const departments = DEPARTMENTS.map((department, i) => {
        const slug = slugify(department);
        const subs = Array.from({ length: SUBS_PER_DEPARTMENT }, (_, j) => inTurn(SUBS, i + j))
            .map((sub) => siteLink(count, '', `/d/${slug}/${slugify(sub)}`, sub))
            .join('');
        return `<li>${siteLink(count, 'menu-link', `/d/${slug}`, department)}<div class="subs">${subs}</div></li>`;
    });
    return `
    <nav class="mega-menu" aria-label="Departments">
      <ul>
        ${departments.join('\n        ')}
      </ul>
    </nav>`;
}

function footerColumns(count: { value: number }, random: Random): string {
    const columns = Object.entries(FOOTER_COLUMNS).map(([title, links]) => {
        const items = links.map((text) => siteLink(count, '', `/help/${slugify(text)}`, text)).join('');
        return `<div class="footer-column"><h3>${title}</h3>${items}</div>`;
    });
    return `
    <div class="footer-columns">${columns.join('')}</div>
    <form class="newsletter" action="/newsletter" method="post"><label>Get ${5 + Math.floor(random() * 10)}% off your \
first order
      <input type="email" name="email" placeholder="you@example.com"></label><button type="submit">Sign \
up</button></form>`;
}

function facets(category: Category): string {
    const group = (name: string, values: string[]) =>
        `<fieldset class="facet"><legend>${name}</legend><ul>${values
            .map((value) => {
                const href = `${category.path}?${name.toLowerCase()}=${encodeURIComponent(value)}`;
                return `<li><a class="facet-link" rel="nofollow" href="${href}">${escapeHtml(value)}</a></li>`;
            })
            .join('')}</ul></fieldset>`;
    return `
<aside class="facets" aria-label="Filters">
  ${group('Brand', BRANDS)}
  ${group('Color', COLORS)}
</aside>`;
}

function card(product: ProductTruth, random: Random): string {
    const rating = 3 + Math.floor(random() * 3);
    const was = product.price * (1.1 + random() * 0.4);
    const badge = random() < 0.3 ? `<span class="badge">${pick(random, BADGES)}</span>` : '';
    return `
  <img src="/img/${product.slug}-400.jpg" alt="${escapeHtml(product.title)}" width="400" height="400" loading="lazy">
  ${badge}<s class="was">${formatPrice(was)}</s> <span class="rating" aria-label="${rating} of \
5">${stars(rating)}</span> (${Math.floor(random() * 400)})
  <p class="blurb">${escapeHtml(product.description.slice(0, 80))}</p>`;
}

function productDetails(catalog: Catalog, firstCount: number, product: ProductTruth, random: Random): string {
    const brand = pick(random, BRANDS);
    const specs = SPEC_NAMES.map(
        (name) => `<tr><th scope="row">${name}</th><td>${specValue(name, brand, random)}</td></tr>`,
    ).join('\n      ');
    const reviews = Array.from({ length: 2 + Math.floor(random() * 2) }, () => review(random)).join('\n    ');
    // A picked product no longer sold is left out.
    const alsoViewed = Array.from({ length: ALSO_VIEWED }, () => 1 + Math.floor(random() * firstCount))
        .flatMap((id) => productById(catalog.products, id) ?? [])
        .map(
            (other) =>
                `<li><a class="also-viewed-link" href="${other.path}?ref=also-viewed">${escapeHtml(other.title)}</a> ` +
                `<span class="price">${formatPrice(other.price)}</span></li>`,
        )
        .join('\n    ');
    const jsonLd = JSON.stringify({
        '@context': 'https://schema.org',
        '@type': 'Product',
        name: product.title,
        sku: product.sku,
        brand: { '@type': 'Brand', name: brand },
        offers: {
            '@type': 'Offer',
            priceCurrency: product.currency,
            price: product.price.toFixed(2),
            availability: `https://schema.org/${product.availability === 'in_stock' ? 'InStock' : 'OutOfStock'}`,
        },
    }).replace(/</g, '\\u003c');
    return `
<section class="specs">
  <h2>Specifications</h2>
  <table class="specs-table">
    <tbody>
      ${specs}
    </tbody>
  </table>
</section>
<section class="customer-reviews">
  <h2>Customer reviews</h2>
    ${reviews}
</section>
<section class="also-viewed">
  <h2>Customers also viewed</h2>
  <ul>
    ${alsoViewed}
  </ul>
</section>
<script type="application/ld+json">${jsonLd}</script>`;
}

function review(random: Random): string {
    const rating = 2 + Math.floor(random() * 4);
    const day = 1 + Math.floor(random() * 28);
    const month = 1 + Math.floor(random() * 12);
    const text = [pick(random, REVIEW_LINES), pick(random, REVIEW_LINES)].join(' ');
    return `<article class="review">
      <header><span class="review-author">${pick(random, REVIEWERS)}</span> <span class="rating" aria-label="${rating} \
out of 5 stars">${stars(rating)}</span>
      <time datetime="2025-${pad(month)}-${pad(day)}">2025-${pad(month)}-${pad(day)}</time></header>
      <p class="review-text">${escapeHtml(text)}</p>
      <button type="button" class="helpful">Helpful (${Math.floor(random() * 40)})</button>
    </article>`;
}

function specValue(name: string, brand: string, random: Random): string {
    const cm = () => `${10 + Math.floor(random() * 190)} cm`;
    switch (name) {
        case 'Width':
        case 'Depth':
        case 'Height':
            return cm();
        case 'Weight':
            return `${(0.2 + random() * 30).toFixed(1)} kg`;
        case 'Brand':
            return escapeHtml(brand);
        case 'Warranty':
            return `${1 + Math.floor(random() * 5)} years`;
        case 'Origin':
            return pick(random, ['Portugal', 'Vietnam', 'Mexico', 'Poland', 'USA']);
        case 'Assembly':
            return random() < 0.5 ? 'No assembly required' : 'Some assembly required';
        case 'Care':
            return 'Wipe clean with a dry cloth';
        default:
            return pick(random, ['Matte', 'Satin', 'Oiled', 'Lacquered']);
    }
}

function stars(rating: number): string {
    return '★'.repeat(rating) + '☆'.repeat(5 - rating);
}

function pad(value: number): string {
    return String(value).padStart(2, '0');
}
