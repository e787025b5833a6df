import { Module } from '@nestjs/common';
import { PortalController } from './portal.controller';

/** Serves the web portal's static files; it owns no table and calls no other module. */
@Module({ controllers: [PortalController] })
export class PortalModule {}
