/**
 * Rule comments as kube-proxy writes them, made safe for any input: iptables'
 * `-m comment --comment` argument (iptables-restore tokenizer, xt_comment's 255 bytes) and
 * nft's `comment "..."` (no escapes at all, 128 bytes). The two tools differ, so there are
 * two quoting functions; every renderer uses these.
 *
 * kube-proxy writes comments built from API object names verbatim. Kubernetes names cannot
 * hold quotes, spaces or newlines, so upstream never escapes; these functions keep upstream's
 * bytes for such text and only rewrite what did not pass API validation.
 *
 * @module
 */

/** xt_comment stores at most 256 bytes including the terminating NUL. */
export const MAX_IPTABLES_COMMENT_BYTES = 255;

/** nft refuses comments longer than this many bytes (`NFT_USERDATA_MAXLEN`). */
export const MAX_NFT_COMMENT_BYTES = 128;

// Characters that need no quoting in an iptables-restore argument.
const BARE_SAFE = /^[A-Za-z0-9_./:@%+=,-]+$/;
// Characters that force a rewrite: control characters, quotes and backslashes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we look for.
const NEEDS_SANITIZING = /[\u0000-\u001f\u007f"\\]/;

/** `text` cut to at most `maxBytes` UTF-8 bytes on a character boundary. */
function truncateUtf8(text: string, maxBytes: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short text needs no exact count.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}

function fitsIptables(text: string): boolean {
  return (
    text.length * 3 <= MAX_IPTABLES_COMMENT_BYTES || Buffer.byteLength(text) <= MAX_IPTABLES_COMMENT_BYTES
  );
}

/** True if `text` can be written in double quotes as it is (what valid Kubernetes names give). */
export function isCleanIptablesComment(text: string): boolean {
  return !NEEDS_SANITIZING.test(text) && fitsIptables(text);
}

/**
 * An iptables comment, always in double quotes (kube-proxy quotes every multi-word comment):
 * control characters become spaces, `"` and `\` are backslash-escaped and the text is cut to
 * {@link MAX_IPTABLES_COMMENT_BYTES}, so no input can break the restore syntax.
 */
export function quoteIptablesComment(text: string): string {
  if (isCleanIptablesComment(text)) return `"${text}"`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters.
  const clean = truncateUtf8(String(text).replace(/[\u0000-\u001f\u007f]/g, ' '), MAX_IPTABLES_COMMENT_BYTES);
  return `"${clean.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/**
 * The iptables-restore token for a comment: bare when it is a single safe word (as kube-proxy
 * writes `ns1/svc1:p80`), otherwise {@link quoteIptablesComment}.
 */
export function iptablesCommentArg(text: string): string {
  if (BARE_SAFE.test(text) && text.length <= MAX_IPTABLES_COMMENT_BYTES) return text;
  return quoteIptablesComment(text);
}

/**
 * An nft comment as a quoted nft string. nft strings have no escape sequences, so double
 * quotes become single quotes, control characters (newlines, tabs, NUL, U+2028/9) become
 * spaces, and the text is cut to {@link MAX_NFT_COMMENT_BYTES} on a character boundary.
 */
export function quoteNftComment(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what must go
  const s = text.replaceAll('"', "'").replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, ' ');
  return `"${truncateUtf8(s, MAX_NFT_COMMENT_BYTES)}"`;
}
