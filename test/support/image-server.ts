import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import sharp from 'sharp';

export type Route = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/**
 * An image host (and an IPFS gateway) on loopback: answers per path and counts every request, so
 * a test can prove what was fetched, how often, and what never was.
 */
export class ImageServer {
  readonly requests: string[] = [];
  readonly routes = new Map<string, Route>();
  private server: Server | null = null;

  /** Serves `bytes` at `path`, with a Content-Type that the service must not believe. */
  image(path: string, bytes: Buffer, contentType = 'application/octet-stream'): string {
    this.routes.set(path, (_req, res) => res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length }).end(bytes));
    return this.url(path);
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  count(path: string): number {
    return this.requests.filter((p) => p === path).length;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '/';
      this.requests.push(path);
      const route = this.routes.get(path);
      if (!route) return void res.writeHead(404).end('not found');
      route(req, res, this.count(path));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const solid = (width: number, height: number, background: string) => sharp({ create: { width, height, channels: 3, background } });

/** Test images, made here rather than shipped: each call with other arguments gives other bytes. */
export const images = {
  png: (width = 300, height = 200, background = '#ff0000') => solid(width, height, background).png().toBuffer(),
  jpeg: (width = 300, height = 200, background = '#00ff00') => solid(width, height, background).jpeg().toBuffer(),
  webp: (width = 300, height = 200, background = '#0000ff') => solid(width, height, background).webp().toBuffer(),
  avif: (width = 300, height = 200, background = '#ffff00') => solid(width, height, background).avif().toBuffer(),
  /** Two frames, red then blue. */
  animatedGif: async (width = 120, height = 80) => {
    const frames = await Promise.all([solid(width, height, '#ff0000').png().toBuffer(), solid(width, height, '#0000ff').png().toBuffer()]);
    return sharp(frames, { join: { animated: true } })
      .gif({ delay: [100, 100], loop: 0 })
      .toBuffer();
  },
  /** A JPEG stored 400 × 200 with EXIF orientation 6 (shown 200 × 400), a copyright and a GPS position. */
  jpegWithExif: async () => {
    const tagged = await solid(400, 200, '#808080')
      .jpeg()
      .withExif({
        IFD0: { Copyright: 'the photographer' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' },
      })
      .toBuffer();
    return sharp(tagged).withMetadata({ orientation: 6 }).jpeg().toBuffer();
  },
  svg: (body: string, attributes = 'width="300" height="150"') =>
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ${attributes}>${body}</svg>`),
};

/** The dominant colour of an image, as sharp reads it. */
export async function dominant(bytes: Buffer): Promise<{ r: number; g: number; b: number }> {
  return (await sharp(bytes).stats()).dominant;
}
