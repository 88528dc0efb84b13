/**
 * HTML templates of the fixture shop. Each function returns a full document; the markup is
 * what scrapers meet on real shops: a shared header and footer, tracking parameters on links,
 * duplicate links to one product, pagination, and pages whose key fields only a script fills in.
 */
import type { Category, DeadLink, ProductTruth } from './catalog.js';
import type { DressedCatalog } from './dressing.js';
import { escapeHtml, formatPrice } from './html.js';

const SHOP_NAME = 'Pinewood Supply Co.';

/** Query strings the shop's own links carry, as marketing tools add them. */
const LISTING_TRACKING = '?utm_source=listing&utm_medium=grid&utm_campaign=cat';
const FEATURED_TRACKING = '?utm_source=home&utm_medium=featured';

export function homePage(catalog: DressedCatalog): string {
    const [first] = catalog.categories;
    const hero = first ? `<a class="category-link" href="${first.path}#top">Shop ${escapeHtml(first.name)}</a>` : '';
    const categories = catalog.categories
        .map(
            (c) =>
                `<li><a class="category-link" href="${c.path}">${escapeHtml(c.name)}</a> <span ` +
                `class="count">(${c.products.length} products)</span></li>`,
        )
        .join('\n');
    const featured = catalog.featured
        .map(
            (p) =>
                `<li><a class="featured-link" ` +
                `href="${escapeHtml(`/p/${p.id}${FEATURED_TRACKING}`)}">${escapeHtml(p.title)}</a> <span ` +
                `class="price">${formatPrice(p.price)}</span></li>`,
        )
        .join('\n');
    return layout(
        catalog,
        'Home',
        `
<section class="hero">
  <h1>${SHOP_NAME}</h1>
  <p>Honest goods for every room, shipped from our workshop.</p>
  ${hero}
</section>
<section class="categories">
  <h2>Shop by category</h2>
  <ul class="category-list">
${categories}
  </ul>
</section>
<section class="featured">
  <h2>Featured</h2>
  <ul>
${featured}
  </ul>
</section>`,
    );
}

/**
 * One page of a category listing, with the dead links and persistent failures that sit on it
 * mixed in among the cards.
 */
export function listingPage(
    catalog: DressedCatalog,
    category: Category,
    page: number,
    productsPerPage: number,
): string {
    const start = (page - 1) * productsPerPage;
    const onPage = category.products.slice(start, start + productsPerPage);
    const cards = onPage.map((product, i) => productCard(product, (i + 1) % 4 === 0, catalog.dressing.card(product)));
    // Dead links first, then persistent failures: with none of the latter the page is what it always was.
    for (const links of [catalog.deadLinks, catalog.persistentFailures]) {
        const here = links.filter((d) => d.categorySlug === category.slug && d.page === page);
        // Insert from the back so earlier positions stay valid.
        for (const deadLink of here.sort((a, b) => b.position - a.position)) {
            cards.splice(deadLink.position, 0, deadCard(deadLink));
        }
    }
    const shown =
        onPage.length === 0
            ? 'No products yet.'
            : `Showing ${start + 1}–${start + onPage.length} of ${category.products.length}`;
    return layout(
        catalog,
        category.name,
        `
<h1 class="category-title">${escapeHtml(category.name)}</h1>
<p class="result-count">${shown}</p>${catalog.dressing.facets(category)}
<section class="product-grid">
${cards.join('\n')}
</section>
${pagination(category, page)}`,
    );
}

export function productPage(
    catalog: DressedCatalog,
    product: ProductTruth,
    origin: string,
    { redesigned = false } = {},
): string {
    const titleClass = redesigned ? 'product-name' : 'product-title';
    const category = catalog.categories.find((c) => c.name === product.category);
    if (!category) throw new Error(`product ${product.id} is in no category of the shop (${product.category})`);
    // Script-only pages ship an empty shell; the script below fills it in, as client-rendered shops do.
    const shown = product.scriptOnly
        ? { title: '', price: '' }
        : { title: escapeHtml(product.title), price: formatPrice(product.price) };
    const related = (catalog.related.get(product.id) ?? [])
        .map((r) => `<li><a class="related-link" href="${r.path}?ref=related">${escapeHtml(r.title)}</a></li>`)
        .join('\n');
    const body = `
<nav class="breadcrumb" aria-label="Breadcrumb">
  <ol>
    <li><a href="/">Home</a></li>
    <li><a class="breadcrumb-category" href="${category.path}">${escapeHtml(category.name)}</a></li>
    <li class="breadcrumb-current" aria-current="page">${shown.title}</li>
  </ol>
</nav>
<article class="product">
  <h1 class="${titleClass}">${shown.title}</h1>
  <div class="buy-box">
    <span class="price" data-currency="${product.currency}">${shown.price}</span>
    <span class="sku">${product.sku}</span>
    ${availability(product)}
    <button type="button" class="add-to-cart"${product.availability === 'in_stock' ? '' : ' disabled'}>Add to \
cart</button>
  </div>
  <div class="description"><p>${escapeHtml(product.description)}</p></div>
  <section id="reviews" class="reviews">
    <h2>Reviews</h2>
    <p>No reviews yet. Be the first to review this product.</p>
  </section>
</article>${catalog.dressing.product(product, catalog)}
<section class="related">
  <h2>Related products</h2>
  <ul>
${related}
  </ul>
</section>${product.scriptOnly ? fillInScript(product, titleClass) : ''}`;
    return layout(
        catalog,
        product.scriptOnly ? 'Loading…' : product.title,
        body,
        `<link rel="canonical" href="${origin}${product.path}">`,
    );
}

export function adminPage(catalog: DressedCatalog): string {
    return layout(
        catalog,
        'Staff login',
        `
<h1>Staff login</h1>
<form class="login" method="post" action="/admin/login">
  <label>User <input name="user"></label>
  <label>Password <input name="password" type="password"></label>
  <button type="submit">Sign in</button>
</form>`,
    );
}

export function notFoundPage(catalog: DressedCatalog): string {
    return layout(
        catalog,
        'Page not found',
        `
<h1>Page not found</h1>
<p>Sorry, we could not find that page. <a href="/">Back to the shop</a></p>`,
    );
}

export function gonePage(catalog: DressedCatalog): string {
    return layout(
        catalog,
        'Product discontinued',
        `
<h1>This product has been discontinued</h1>
<p>It is no longer sold and will not come back. <a href="/">Browse our other products</a></p>`,
    );
}

export function unavailablePage(catalog: DressedCatalog): string {
    return layout(
        catalog,
        'Service unavailable',
        `
<h1>We'll be right back</h1>
<p>The shop is busy right now. Please try again in a moment.</p>`,
    );
}

export function tooManyRequestsPage(catalog: DressedCatalog): string {
    return layout(
        catalog,
        'Too many requests',
        `
<h1>Slow down</h1>
<p>You are sending requests too quickly. Please wait a moment and try again.</p>`,
    );
}

export const robotsTxt = 'User-agent: *\nDisallow: /admin/\n';

/** The document around every page: head, header with the category nav, footer. */
function layout(catalog: DressedCatalog, title: string, main: string, head = ''): string {
    const nav = catalog.categories
        .map((c) => `<a class="nav-link" href="${c.path}">${escapeHtml(c.name)}</a>`)
        .join('\n      ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} | ${SHOP_NAME}</title>
  ${head}${catalog.dressing.head}
</head>
<body>
  <header id="top" class="site-header">
    <a class="logo" href="/">${SHOP_NAME}</a>
    <nav class="site-nav">
      ${nav}
    </nav>
    <form class="search" action="/search" method="get"><input name="q" placeholder="Search"><button \
type="submit">Search</button></form>${catalog.dressing.menu}
  </header>
  <main>
${main}
  </main>
  <footer class="site-footer">${catalog.dressing.footer}
    <p>&copy; ${SHOP_NAME} · <a href="/admin/">Staff login</a></p>
  </footer>
</body>
</html>
`;
}

/** A listing card; `withReviewsLink` adds the second link to the same product that some cards carry. */
function productCard(product: ProductTruth, withReviewsLink: boolean, dressing: string): string {
    const reviews = withReviewsLink
        ? `\n  <a class="product-link reviews-link" href="${product.path}?ref=category#reviews">Read reviews</a>`
        : '';
    return `<article class="product-card">
  <a class="product-link" href="${escapeHtml(product.path + LISTING_TRACKING)}"><h2 \
class="card-title">${escapeHtml(product.title)}</h2></a>
  <span class="price">${formatPrice(product.price)}</span>${reviews}${dressing}
</article>`;
}

/** A card that looks like any other but points at a product that does not exist (or always fails). */
function deadCard(deadLink: DeadLink): string {
    return `<article class="product-card">
  <a class="product-link" href="${escapeHtml(deadLink.path + LISTING_TRACKING)}"><h2 \
class="card-title">${escapeHtml(deadLink.title)}</h2></a>
  <span class="price">${formatPrice(deadLink.price)}</span>
</article>`;
}

function pagination(category: Category, page: number): string {
    // Page 2 links back to `?page=1`, a second URL for page 1 that a crawler has to recognize.
    const previous = page > 1 ? `<a rel="prev" class="prev" href="${category.path}?page=${page - 1}">Previous</a>` : '';
    const next =
        page < category.pageCount ? `<a rel="next" class="next" href="${category.path}?page=${page + 1}">Next</a>` : '';
    return `<nav class="pagination">
  ${previous}
  <span class="current">Page ${page} of ${category.pageCount}</span>
  ${next}
</nav>`;
}

function availability(product: ProductTruth): string {
    return product.availability === 'in_stock'
        ? `<p class="availability in-stock">In stock (${product.stock} available)</p>`
        : `<p class="availability out-of-stock">Out of stock</p>`;
}

/** The inline script that fills in a script-only page's title and price once the DOM is ready. */
function fillInScript(product: ProductTruth, titleClass: string): string {
    const data = JSON.stringify({ title: product.title, price: product.price }).replace(/</g, '\\u003c');
    return `
<script>
  var product = ${data};
  document.addEventListener('DOMContentLoaded', function () {
    var price = '$' + product.price.toFixed(2);
    document.querySelector('h1.${titleClass}').textContent = product.title;
    document.querySelector('.breadcrumb-current').textContent = product.title;
    document.querySelector('.buy-box .price').textContent = price;
    document.title = product.title + ' | ${SHOP_NAME}';
  });
</script>`;
}
