/**
 * Bad input from a source: a manifest that does not decode or validate, a URL that does not
 * answer, two pods with one name. Each names the source, where the input came from and why;
 * the other pods of the source keep going.
 *
 * @module
 */

/** What went wrong with one source input. */
export type PodSourceErrorCode =
  | 'Unreadable'
  | 'TooLarge'
  | 'Undecodable'
  | 'NotAPod'
  | 'Invalid'
  | 'DuplicateName'
  | 'HttpStatus'
  | 'EmptyBody';

/** A manifest, a URL answer or a pod a source could not use. */
export class PodSourceError extends Error {
  override readonly name = 'PodSourceError';

  /**
   * @param code the kind of failure.
   * @param source `file`, `http` or `api`.
   * @param location the manifest file, the URL, or the pod's full name.
   * @param reason why, in a sentence.
   */
  constructor(
    readonly code: PodSourceErrorCode,
    readonly source: string,
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${source} source: ${location}: ${reason}`);
  }
}

/** Where sources and the merge report bad input. */
export type PodSourceErrorHandler = (error: PodSourceError) => void;
