import sharp, { Sharp } from 'sharp';
import { ImageType, MediaFailure, orientedSize, sniffImageType, thumbnailSize, WIDTHS } from './media.rules';

/**
 * libvips keeps decoded operations in a cache of its own (by default up to 50 MB and 100 files
 * open) so that repeated work on one file is quick; this service never processes one original
 * twice, so the cache would only hold memory.
 */
sharp.cache(false);

/** Images larger than this many pixels (about 10,000 × 10,000) are refused: a small file can decode huge. */
const MAX_INPUT_PIXELS = 100_000_000;
/** Decoding and encoding one image; past it the image counts as one that does not decode. */
const PROCESSING_TIMEOUT_SECONDS = 30;

/**
 * libwebp's effort (0-6, default 4): 1 encodes a 1024-pixel thumbnail in about a third of the CPU
 * time of 4, for files a few percent larger (bench:media, BENCHMARKS.md).
 */
const WEBP_EFFORT = 1;

/** What sharp (libvips) calls each accepted type: the decoder must agree with the bytes' signature. */
const DECODER_FORMAT: Record<ImageType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'heif',
  'image/svg+xml': 'svg',
};

export interface Thumbnail {
  width: number;
  height: number;
  bytes: Buffer;
}

export interface ProcessedImage {
  contentType: ImageType;
  /** As shown: orientation applied; an SVG's intrinsic size. */
  width: number;
  height: number;
  /** By requested width (64, 256, 1024), each WebP. */
  thumbnails: Map<number, Thumbnail>;
}

const unsupported = (message: string) => new MediaFailure('UNSUPPORTED_MEDIA', message);

/**
 * Turns an original into its WebP thumbnails. The type is judged by the bytes alone; then the
 * image is decoded once (first frame of an animation; an SVG rasterized by librsvg, which runs no
 * script and loads no external resource), turned by its EXIF orientation, converted to sRGB and
 * scaled to the largest thumbnail, from which the smaller ones are made. Nothing of the original's
 * metadata (EXIF, XMP, ICC profile) reaches a thumbnail: sharp writes none unless asked.
 * Throws MediaFailure UNSUPPORTED_MEDIA for anything else or anything that does not decode.
 */
export async function makeThumbnails(bytes: Buffer): Promise<ProcessedImage> {
  const contentType = sniffImageType(bytes);
  if (contentType === null) throw unsupported('the bytes are not a PNG, JPEG, GIF, WebP, AVIF or SVG image');
  const input = (): Sharp =>
    sharp(bytes, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS, pages: 1, animated: false }).timeout({
      seconds: PROCESSING_TIMEOUT_SECONDS,
    });
  try {
    const meta = await input().metadata();
    if (meta.format !== DECODER_FORMAT[contentType] || !meta.width || !meta.height) {
      throw unsupported(`the bytes do not decode as ${contentType}`);
    }
    if (contentType === 'image/avif' && meta.compression !== 'av1') throw unsupported('the bytes do not decode as image/avif');
    // An animation's metadata height is the first page's only when pages is 1; pageHeight says so either way.
    const { width, height } = orientedSize(meta.width, meta.pageHeight ?? meta.height, meta.orientation);
    const largest = thumbnailSize(width, height, Math.max(...WIDTHS));
    const { data, info } = await input()
      .rotate()
      .resize(largest.width, largest.height, { fit: 'fill' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = { width: info.width, height: info.height, channels: info.channels };
    const thumbnails = new Map<number, Thumbnail>();
    for (const target of WIDTHS) {
      const size = thumbnailSize(width, height, target);
      const pipeline = sharp(data, { raw });
      const scaled =
        size.width === raw.width && size.height === raw.height ? pipeline : pipeline.resize(size.width, size.height, { fit: 'fill' });
      thumbnails.set(target, { ...size, bytes: await scaled.webp({ quality: 80, effort: WEBP_EFFORT }).toBuffer() });
    }
    return { contentType, width, height, thumbnails };
  } catch (error) {
    if (error instanceof MediaFailure) throw error;
    // libvips's message names the decoder's complaint; it says nothing of the service.
    throw unsupported(`the image does not decode: ${String((error as Error)?.message ?? error).split('\n')[0]}`);
  }
}
