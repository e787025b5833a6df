import { EntityManager } from '@mikro-orm/postgresql';
import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { StartupError } from '../../startup-checks';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { MediaController } from './media.controller';
import { MediaFetcher } from './media-fetcher';
import { MediaLinkSigner } from './media-links';
import { CachingMediaStorage, DirectoryMediaStorage, MediaStorage, PostgresMediaStorage } from './media-storage';
import { MediaRepository } from './media.repository';
import { MediaService } from './media.service';
import { MediaWorker } from './media.worker';

/** Thumbnails kept in memory per process for the answers that serve them. */
const THUMBNAIL_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Token images (README.md "Images"): fetched in the background, checked, turned into WebP
 * thumbnails kept once per original, and served by signed links. Owns `token_media`,
 * `media_image`, `media_source` and `media_thumbnail`; the tokens module tells it about every
 * image written and reads a token's media through its exported view (token-media.view.ts).
 */
@Module({
  imports: [DomainEventsModule],
  controllers: [MediaController],
  providers: [
    MediaRepository,
    MediaService,
    MediaLinkSigner,
    MediaFetcher,
    MediaWorker,
    {
      provide: MediaStorage,
      inject: [AppConfig, EntityManager],
      useFactory: async (config: AppConfig, em: EntityManager): Promise<MediaStorage> => {
        if (config.media.storage.kind === 'postgres') return new CachingMediaStorage(new PostgresMediaStorage(em), THUMBNAIL_CACHE_BYTES);
        const storage = new DirectoryMediaStorage(config.media.storage.path);
        const path = config.media.storage.path;
        await storage.prepare().catch((error: NodeJS.ErrnoException) => {
          throw new StartupError(
            `MEDIA_STORAGE ${path} cannot be used: ${error.code ?? error.message} (it must be a directory this process can create and write)`,
          );
        });
        return new CachingMediaStorage(storage, THUMBNAIL_CACHE_BYTES);
      },
    },
  ],
  exports: [MediaService, MediaLinkSigner],
})
export class MediaModule {}
