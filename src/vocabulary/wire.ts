/**
 * Wire profiles: how a request looks on the wire, below its headers (the TLS handshake, HTTP/2's
 * settings, the header order). `fast` is Node's own client (fetch/http/httpClient.ts), the least CPU;
 * `chrome` is the network stack of the Chromium on the machine (fetch/wire/chromeWire.ts), the
 * browser's handshake by construction. `auto` starts every section on `fast` and lets the tier
 * controller move a section to `chrome` when `fast` gets it blocked. docs/identities.md says which to use.
 */
import type { WireChoice, WireProfile } from '../site/site.js';

export type { WireChoice, WireProfile };

export const WIRE_PROFILES = ['fast', 'chrome'] as const satisfies readonly WireProfile[];
/** What the site option `wire`, `--wire` and `DRAGNET_WIRE` take. */
export const WIRE_CHOICES = [...WIRE_PROFILES, 'auto'] as const satisfies readonly WireChoice[];
