import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { AuditModule } from '../audit/audit.module';
import { ApiKey } from './api-key.entity';
import { ApiKeyStrategy } from './api-key.strategy';
import { ApiKeysController } from './api-keys.controller';
import { OperatorController } from './operator.controller';
import { Organization } from './organization.entity';
import { OrganizationsService } from './organizations.service';

@Module({
  imports: [MikroOrmModule.forFeature([Organization, ApiKey]), PassportModule, AuditModule],
  controllers: [OperatorController, ApiKeysController],
  providers: [OrganizationsService, ApiKeyStrategy],
  exports: [OrganizationsService],
})
export class OrganizationsModule {}
