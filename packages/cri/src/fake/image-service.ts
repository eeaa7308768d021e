/**
 * The fake's `runtime.v1.ImageService` handlers over its {@link ImageStore}.
 *
 * @module
 */
import type { ImageServiceServer, StreamImagesRequest } from '../gen/runtime/v1/api.js';
import { invalidArgument } from './fake-error.js';
import type { ImageStore, StoredImage } from './image-store.js';
import type { NanoClock } from './records.js';
import { chunkedList, type HandlerContext, unary, unimplementedStream } from './rpc-handlers.js';
import { FAKE_SNAPSHOTTER_MOUNT } from './stats.js';
import { toImage } from './wire.js';

/** What the ImageService handlers need. */
export interface ImageServiceContext extends HandlerContext {
  readonly images: ImageStore;
  readonly nanos: NanoClock;
  readonly streamingLists: boolean;
  readonly streamChunkSize: number;
}

/** Builds the ImageService implementation over `ctx`. */
export function imageServiceHandlers(ctx: ImageServiceContext): ImageServiceServer {
  const { images } = ctx;
  const list = (filterImage: string | undefined): StoredImage[] => {
    if (filterImage === undefined || filterImage === '') return images.list();
    const one = images.find(filterImage);
    return one === undefined ? [] : [one];
  };
  const requireRef = (ref: string | undefined, method: string): string => {
    if (ref === undefined || ref.trim() === '')
      throw invalidArgument(`${method}: image reference must not be empty`);
    return ref;
  };
  return {
    listImages: unary(ctx, 'ListImages', (req) => ({ images: list(req.filter?.image?.image).map(toImage) })),
    streamImages: ctx.streamingLists
      ? chunkedList(
          ctx,
          'StreamImages',
          (req: StreamImagesRequest) => list(req.filter?.image?.image).map(toImage),
          (chunk) => ({ images: chunk }),
          ctx.streamChunkSize,
        )
      : unimplementedStream(ctx, 'StreamImages'),
    imageStatus: unary(ctx, 'ImageStatus', (req) => {
      const image = images.find(requireRef(req.image?.image, 'ImageStatus'));
      return {
        image: image === undefined ? undefined : toImage(image),
        info:
          req.verbose && image !== undefined
            ? { info: JSON.stringify({ id: image.id, size: image.sizeBytes }) }
            : {},
      };
    }),
    pullImage: unary(ctx, 'PullImage', (req) => ({
      imageRef: images.pull(requireRef(req.image?.image, 'PullImage')),
    })),
    removeImage: unary(ctx, 'RemoveImage', (req) => {
      images.remove(requireRef(req.image?.image, 'RemoveImage'));
      return {};
    }),
    imageFsInfo: unary(ctx, 'ImageFsInfo', () => ({
      imageFilesystems: [
        {
          timestamp: ctx.nanos.now(),
          fsId: { mountpoint: FAKE_SNAPSHOTTER_MOUNT },
          usedBytes: { value: BigInt(images.usedBytes()) },
          inodesUsed: { value: BigInt(images.list().length * 100) },
        },
      ],
      containerFilesystems: [],
    })),
  };
}
