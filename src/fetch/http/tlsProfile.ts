/**
 * The TLS settings of the HTTP client's connections, as close to desktop Chrome's handshake as
 * Node's OpenSSL allows: Chrome's cipher suites, signature algorithms and curves in Chrome's order,
 * TLS padding, no encrypt-then-MAC, OCSP stapling asked for. Every identity is Chrome
 * (identities.ts), so there is one profile. The values are those got-scraping 4 gives a Chrome user
 * agent (its `tlsHook`), which this client replaces; OpenSSL cannot send GREASE values or Chrome's
 * extension order, so a JA3/JA4 fingerprint still tells Node from Chrome, as it did with got-scraping.
 *
 * Certificates are not verified, as got-scraping and Crawlee's HttpCrawler do by default: a scraper
 * wants the page, and it sends nothing secret to the sites it crawls.
 */
import { constants } from 'node:crypto';

/** OpenSSL's SSL_OP_TLSEXT_PADDING, which Node's `crypto.constants` does not list. */
const SSL_OP_TLSEXT_PADDING = 1 << 4;

export const CHROME_TLS = {
    ciphers: [
        'TLS_AES_128_GCM_SHA256',
        'TLS_AES_256_GCM_SHA384',
        'TLS_CHACHA20_POLY1305_SHA256',
        'ECDHE-ECDSA-AES128-GCM-SHA256',
        'ECDHE-RSA-AES128-GCM-SHA256',
        'ECDHE-ECDSA-AES256-GCM-SHA384',
        'ECDHE-RSA-AES256-GCM-SHA384',
        'ECDHE-ECDSA-CHACHA20-POLY1305',
        'ECDHE-RSA-CHACHA20-POLY1305',
        'ECDHE-RSA-AES128-SHA',
        'ECDHE-RSA-AES256-SHA',
        'AES128-GCM-SHA256',
        'AES256-GCM-SHA384',
        'AES128-SHA',
        'AES256-SHA',
    ].join(':'),
    sigalgs: [
        'ecdsa_secp256r1_sha256',
        'rsa_pss_rsae_sha256',
        'rsa_pkcs1_sha256',
        'ecdsa_secp384r1_sha384',
        'rsa_pss_rsae_sha384',
        'rsa_pkcs1_sha384',
        'rsa_pss_rsae_sha512',
        'rsa_pkcs1_sha512',
    ].join(':'),
    ecdhCurve: 'X25519:prime256v1:secp384r1',
    minVersion: 'TLSv1',
    maxVersion: 'TLSv1.3',
    secureOptions: SSL_OP_TLSEXT_PADDING | constants.SSL_OP_NO_ENCRYPT_THEN_MAC,
    requestOCSP: true,
    rejectUnauthorized: false,
} as const;
