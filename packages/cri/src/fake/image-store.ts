/**
 * The fake's images: the ones present on the node (listed, inspected, removed) and
 * the ones a "registry" would serve (pullable). Pulling anything else fails the way a
 * registry miss does.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { FakeRuntimeError } from './fake-error.js';
import { isImageId, normalizeImageRef } from './image-ref.js';

/** An image the fake knows, either present on the node or available for pulling. */
export interface FakeImage {
  /** A reference naming it, e.g. `busybox:1.36` or `registry.local/app:v1` (normalised on the way in). */
  readonly ref: string;
  /** Its ID. @default "sha256:" + a hash of the normalised ref */
  readonly id?: string;
  /** Size on disk in bytes, reported by ListImages/ImageStatus and counted by ImageFsInfo. @default 2 MiB */
  readonly sizeBytes?: number;
  /** Repo digests to report (`repo@sha256:...`). @default none */
  readonly repoDigests?: readonly string[];
  /** The user the image runs as (`uid` if numeric, else `username`). @default "" (root) */
  readonly user?: string;
  /** Pinned images are never garbage collected by the kubelet. @default false */
  readonly pinned?: boolean;
}

/** One image present on the node. */
export interface StoredImage {
  readonly id: string;
  readonly repoTags: string[];
  readonly repoDigests: string[];
  readonly sizeBytes: number;
  readonly user: string;
  readonly pinned: boolean;
}

const DEFAULT_IMAGE_BYTES = 2 * 1024 * 1024;

function idFor(image: FakeImage, normalized: string): string {
  return image.id ?? `sha256:${createHash('sha256').update(`image/${normalized}`).digest('hex')}`;
}

/**
 * Answers a pull of a reference the fake registry does not list: the image to serve (a
 * simulated registry that has more), or `undefined` for NOT_FOUND.
 */
export type FakeRegistryResolver = (normalizedRef: string) => FakeImage | undefined;

/** The images on the node and in the fake registry. */
export class ImageStore {
  readonly #local = new Map<string, StoredImage>();
  readonly #remote = new Map<string, FakeImage>();
  readonly #resolver: FakeRegistryResolver | undefined;

  /** @param resolver serves pulls of references the registry does not list. @default none */
  constructor(resolver?: FakeRegistryResolver) {
    this.#resolver = resolver;
  }

  /** Makes `image` present on the node (and pullable again after removal). Returns its ID. */
  preload(image: FakeImage): string {
    this.addRemote(image);
    return this.#store(image);
  }

  /** Makes `image` pullable without putting it on the node. */
  addRemote(image: FakeImage): void {
    this.#remote.set(normalizeImageRef(image.ref), image);
  }

  /**
   * Pulls `ref`: from the registry into the node's store. Returns the image ID.
   * @throws FakeRuntimeError NOT_FOUND when the registry has no such image.
   */
  pull(ref: string): string {
    const normalized = normalizeImageRef(ref);
    const image = this.#remote.get(normalized) ?? this.#resolver?.(normalized);
    if (image === undefined) {
      throw new FakeRuntimeError(
        status.NOT_FOUND,
        `failed to pull and unpack image "${normalized}": failed to resolve reference "${normalized}": ${normalized}: not found`,
      );
    }
    return this.#store({ ...image, ref: normalized });
  }

  /** The image `refOrId` names: a tag, a repo digest, a full ID, or a unique ID prefix. */
  find(refOrId: string): StoredImage | undefined {
    const trimmed = refOrId.trim();
    if (trimmed === '') return undefined;
    const asId = isImageId(trimmed) ? trimmed : /^[0-9a-f]{12,64}$/.test(trimmed) ? `sha256:${trimmed}` : '';
    if (asId !== '') {
      const exact = this.#local.get(asId);
      if (exact) return exact;
      const prefixed = [...this.#local.values()].filter((i) => i.id.startsWith(asId));
      if (prefixed.length === 1) return prefixed[0];
    }
    const normalized = normalizeImageRef(trimmed);
    for (const image of this.#local.values()) {
      if (image.repoTags.includes(normalized) || image.repoDigests.includes(normalized)) return image;
    }
    return undefined;
  }

  /** Removes the image `refOrId` names, with all its tags. Missing images are not an error. */
  remove(refOrId: string): void {
    const image = this.find(refOrId);
    if (image) this.#local.delete(image.id);
  }

  /** Every image on the node, in insertion order. */
  list(): StoredImage[] {
    return [...this.#local.values()];
  }

  /** Total bytes of the images on the node. */
  usedBytes(): number {
    let total = 0;
    for (const image of this.#local.values()) total += image.sizeBytes;
    return total;
  }

  #store(image: FakeImage): string {
    const normalized = normalizeImageRef(image.ref);
    const id = idFor(image, normalized);
    // A tag points to one image: moving it to a new ID drops it from the old one.
    for (const other of this.#local.values()) {
      if (other.id === id) continue;
      const at = other.repoTags.indexOf(normalized);
      if (at >= 0) other.repoTags.splice(at, 1);
    }
    const existing = this.#local.get(id);
    if (existing) {
      if (!existing.repoTags.includes(normalized)) existing.repoTags.push(normalized);
      for (const d of (image.repoDigests ?? []).map(normalizeImageRef))
        if (!existing.repoDigests.includes(d)) existing.repoDigests.push(d);
      return id;
    }
    this.#local.set(id, {
      id,
      repoTags: [normalized],
      repoDigests: (image.repoDigests ?? []).map(normalizeImageRef),
      sizeBytes: image.sizeBytes ?? DEFAULT_IMAGE_BYTES,
      user: image.user ?? '',
      pinned: image.pinned ?? false,
    });
    return id;
  }
}
