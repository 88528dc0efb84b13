/** The text helpers of the fixture shop's catalog and templates. */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

export function formatPrice(price: number): string {
    return `$${price.toFixed(2)}`;
}

export function slugify(text: string): string {
    return text
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '');
}
