/**
 * A page's bytes as text, decoded as a browser decodes them (the HTML standard's encoding
 * sniffing): a byte order mark first, then the charset of the `Content-Type` header (a WHATWG
 * label: `latin1` and `iso-8859-1` mean windows-1252, `sjis` means Shift_JIS), then a `<meta>`
 * charset in the first 1,024 bytes, then UTF-8. An unknown label is passed over, not an error.
 * A body with a NUL byte (outside UTF-16) is binary, no page at all, whatever its label says.
 */
import sniffHtmlEncoding from 'html-encoding-sniffer';
import { decode } from 'whatwg-encoding';

export interface DecodedBody {
    html: string;
    /** The WHATWG name of the encoding the page was read in (`UTF-8`, `windows-1252`, `Shift_JIS`, …). */
    charset: string;
    /** NUL bytes in a body not in UTF-16: an image or an archive labelled as text. */
    binary: boolean;
}

export function decodeBody(bytes: Buffer, contentType: string | undefined): DecodedBody {
    const charset = sniffHtmlEncoding(bytes, {
        transportLayerEncodingLabel: charsetParameter(contentType),
        defaultEncoding: 'UTF-8',
    });
    const binary = !charset.startsWith('UTF-16') && hasNulByte(bytes);
    // Node decodes UTF-8 itself, several times faster than through iconv-lite, with the same
    // replacement of invalid sequences by U+FFFD.
    const html = charset === 'UTF-8' ? bytes.toString('utf8').replace(/^\uFEFF/, '') : decode(bytes, charset);
    return { html, charset, binary };
}

function charsetParameter(contentType: string | undefined): string | undefined {
    return contentType?.match(/;\s*charset\s*=\s*"?([^";\s]+)/i)?.[1];
}

/**
 * Git's test for binary content: a NUL byte in the first 8,000 bytes. Text in any 8-bit
 * encoding or UTF-8 never has one; a stray control character (a backspace pasted into a CMS)
 * is no reason to drop a page.
 */
function hasNulByte(bytes: Buffer): boolean {
    const nul = bytes.indexOf(0);
    return nul !== -1 && nul < 8000;
}
