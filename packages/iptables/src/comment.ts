/**
 * Writing `-m comment --comment` arguments the way kube-proxy does, safely for any input.
 *
 * kube-proxy writes comments built from API object names verbatim: multi-word comments in
 * double quotes, single-word ones bare. Kubernetes names cannot hold quotes, spaces or
 * newlines, so upstream never escapes. This renderer may be fed names that did not pass API
 * validation, so it keeps upstream's bytes for valid names and otherwise makes the comment
 * safe for iptables-restore's tokenizer: control characters (newlines included) become
 * spaces, `"` and `\` are backslash-escaped inside quotes, and the text is cut to the
 * kernel's 255-byte comment limit.
 *
 * @module
 */

/** xt_comment stores at most 256 bytes including the terminating NUL. */
export const MAX_COMMENT_BYTES = 255;

// Characters that need no quoting in an iptables-restore argument.
const BARE_SAFE = /^[A-Za-z0-9_./:@%+=,-]+$/;
// Characters that force a rewrite: control characters, quotes and backslashes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we look for.
const NEEDS_SANITIZING = /[\u0000-\u001f\u007f"\\]/;

function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s, 'utf8') <= maxBytes) return s;
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/**
 * The restore-file token for a comment: bare when it is a single safe word (as kube-proxy
 * writes `ns1/svc1:p80`), otherwise double-quoted and escaped.
 */
export function commentArg(text: string): string {
  if (BARE_SAFE.test(text) && text.length <= MAX_COMMENT_BYTES) return text;
  return quoteComment(text);
}

/** True if `text` can be written in double quotes as it is (what valid Kubernetes names give). */
export function isCleanComment(text: string): boolean {
  return !NEEDS_SANITIZING.test(text) && text.length <= MAX_COMMENT_BYTES;
}

/** Always double-quotes (kube-proxy quotes every multi-word comment), escaping as needed. */
export function quoteComment(text: string): string {
  if (!NEEDS_SANITIZING.test(text) && text.length <= MAX_COMMENT_BYTES) return `"${text}"`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters.
  let clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  clean = truncateUtf8(clean, MAX_COMMENT_BYTES);
  return `"${clean.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
