/**
 * Labels and annotations as kube-apiserver validates them (upstream
 * `apimachinery/pkg/apis/meta/v1/validation.ValidateLabels`, `api/validation.ValidateAnnotations`):
 * keys are qualified names (`[prefix/]name`, annotation keys case-insensitively), label values at
 * most 63 characters of a restricted alphabet, and all annotations together at most 256 KiB
 * (`TotalAnnotationSizeLimitB`), so one object cannot carry megabytes of metadata.
 *
 * @module
 */
import type { StatusCause } from './errors.js';
import { isPlainObject } from './object.js';

/** Upper bound of all annotation keys and values together, in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  const e = examples.map((x) => `'${x}'`).join(',  or ');
  return `${msg} (e.g. ${e}, regex used for validation is '${fmt}')`;
}

const QUALIFIED_NAME_MSG = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  QUALIFIED_NAME_FMT,
  'MyName',
  'my.name',
  '123-abc',
);
const LABEL_VALUE_MSG = regexError(
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  LABEL_VALUE_FMT,
  'MyValue',
  'my_value',
  '12345',
);
const SUBDOMAIN_MSG = regexError(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  DNS1123_SUBDOMAIN_FMT,
  'example.com',
);

/** Upstream `IsQualifiedName`: the messages for `value` (empty when valid). */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0] as string;
  else if (parts.length === 2) {
    const prefix = parts[0] as string;
    name = parts[1] as string;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) errs.push('prefix part must be no more than 253 characters');
      if (!DNS1123_SUBDOMAIN.test(prefix)) errs.push(`prefix part ${SUBDOMAIN_MSG}`);
    }
  } else {
    return [
      `a qualified name ${QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${QUALIFIED_NAME_MSG}`);
  return errs;
}

/** Upstream `IsValidLabelValue`: the messages for `value` (empty when valid). */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value)) errs.push(LABEL_VALUE_MSG);
  return errs;
}

function invalid(field: string, value: unknown, detail: string): StatusCause {
  const shown = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value);
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${shown}: ${detail}`, field };
}

/** `metadata.labels`: qualified-name keys, valid values. */
export function validateLabels(labels: unknown, field: string, causes: StatusCause[]): void {
  if (labels === undefined || labels === null) return;
  if (!isPlainObject(labels)) {
    causes.push(invalid(field, labels, 'must be a map of strings'));
    return;
  }
  for (const [k, v] of Object.entries(labels)) {
    for (const msg of isQualifiedName(k)) causes.push(invalid(field, k, msg));
    if (typeof v !== 'string') causes.push(invalid(field, v, 'must be a string'));
    else for (const msg of isValidLabelValue(v)) causes.push(invalid(field, v, msg));
  }
}

/** `metadata.annotations`: qualified-name keys (any case), at most 256 KiB in all. */
export function validateAnnotations(annotations: unknown, field: string, causes: StatusCause[]): void {
  if (annotations === undefined || annotations === null) return;
  if (!isPlainObject(annotations)) {
    causes.push(invalid(field, annotations, 'must be a map of strings'));
    return;
  }
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) causes.push(invalid(field, k, msg));
    if (typeof v !== 'string') causes.push(invalid(field, v, 'must be a string'));
    total += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    causes.push({
      reason: 'FieldValueTooLong',
      message: `Too long: must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes`,
      field,
    });
  }
}
