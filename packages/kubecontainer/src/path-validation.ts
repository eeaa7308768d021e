/**
 * The API server's rules for the strings a node joins onto host paths (upstream
 * `k8s.io/apimachinery/pkg/util/validation` and `pkg/apis/core/validation`): DNS-1123 labels
 * (namespaces, container and volume names), DNS-1123 subdomains (pod names), local descending
 * paths (`subPath`, `subPathExpr`) and single path components (the pod UID). Each check returns
 * the API server's messages (empty when valid), so a node can refuse what kube-apiserver would
 * have refused, with the same words, even when the pod came from somewhere that did not validate.
 *
 * @module
 */

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*$`);

/** Longest DNS-1123 label (namespaces, container names, volume names). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Longest DNS-1123 subdomain (pod names). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Longest single path component on Linux (`NAME_MAX`), in bytes. */
export const PATH_COMPONENT_MAX_BYTES = 255;

/** Upstream `IsDNS1123Label`'s regex message. */
export const DNS1123_LABEL_ERROR_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
/** Upstream `IsDNS1123Subdomain`'s regex message. */
export const DNS1123_SUBDOMAIN_ERROR_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** Messages for `value` as a DNS-1123 label (upstream `IsDNS1123Label`); empty when valid. */
export function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL.test(value)) errs.push(DNS1123_LABEL_ERROR_MESSAGE);
  return errs;
}

/** Messages for `value` as a DNS-1123 subdomain (upstream `IsDNS1123Subdomain`); empty when valid. */
export function isDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN.test(value)) errs.push(DNS1123_SUBDOMAIN_ERROR_MESSAGE);
  return errs;
}

/**
 * `"must not contain '..'"` when a `/`-separated element of `path` is `..` (upstream
 * `ValidatePathNoBacksteps`, checked by both kube-apiserver and the kubelet); else undefined.
 * Nothing is decoded: `%2e%2e` is a file name, not a backstep, as for the kubelet.
 */
export function validatePathNoBacksteps(path: string): string | undefined {
  return path.split('/').includes('..') ? "must not contain '..'" : undefined;
}

/**
 * Messages for `path` as a path that must stay below the directory it is joined to (upstream
 * `validateLocalDescendingPath`, used for `subPath` and `subPathExpr`): not absolute, no `..`
 * element. Empty when valid.
 */
export function validateLocalDescendingPath(path: string): string[] {
  const errs: string[] = [];
  if (path.startsWith('/')) errs.push('must be a relative path');
  const back = validatePathNoBacksteps(path);
  if (back !== undefined) errs.push(back);
  return errs;
}

/**
 * Messages for `value` used as exactly one host path component (the pod UID in
 * `<podsRoot>/<uid>`, which kube-apiserver generates and never validates): non-empty, not `.` or
 * `..`, no `/` or NUL, at most {@link PATH_COMPONENT_MAX_BYTES} bytes. Empty when valid.
 */
export function validatePathComponent(value: string): string[] {
  const errs: string[] = [];
  if (value === '') errs.push('must not be empty');
  if (value === '.' || value === '..') errs.push("must not be '.' or '..'");
  if (value.includes('/')) errs.push("must not contain '/'");
  if (value.includes('\0')) errs.push('must not contain NUL');
  if (Buffer.byteLength(value) > PATH_COMPONENT_MAX_BYTES)
    errs.push(`must be no more than ${PATH_COMPONENT_MAX_BYTES} bytes`);
  return errs;
}

/** One refused field, in the API server's words (`field.Error`). */
export interface PathFieldError {
  /** Field path, e.g. `spec.containers[0].volumeMounts[1].subPath`. */
  readonly field: string;
  /** The refused value. */
  readonly value: string;
  /** Why, e.g. `must not contain '..'`. */
  readonly detail: string;
}

/** `<field>: Invalid value: "<value>": <detail>`, as upstream `field.Error.Error()` prints it. */
export function formatFieldError(e: PathFieldError): string {
  return `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
}
