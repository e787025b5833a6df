import { EntityManager } from '@mikro-orm/postgresql';
import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { StartupError } from '../../startup-checks';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { MediaController } from './media.controller';
import { MediaFetcher } from './media-fetcher';
import { MediaLinkSigner } from './media-links';
import { CachingMediaStorage, DirectoryMediaStorage, mediaDirectoryProblem, MediaStorage, PostgresMediaStorage } from './media-storage';
import { MediaRepository } from './media.repository';
import { MediaService } from './media.service';
import { MediaWorker } from './media.worker';

/** Thumbnails kept in memory per process for the answers that serve them. */
const THUMBNAIL_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Token images (docs/IMAGES.md "Images"): fetched in the background, checked, turned into WebP
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
        // main.ts checked it before the application was built (one line, no stack); checked again
        // here for an application built without it (tests).
        const problem = await mediaDirectoryProblem(config.media.storage.path);
        if (problem !== null) throw new StartupError(problem);
        const storage = new DirectoryMediaStorage(config.media.storage.path);
        return new CachingMediaStorage(storage, THUMBNAIL_CACHE_BYTES);
      },
    },
  ],
  exports: [MediaService, MediaLinkSigner],
})
export class MediaModule {}
