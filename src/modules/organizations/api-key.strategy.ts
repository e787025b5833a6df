import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BearerHeaderStrategy } from '../../common/auth/bearer-header.strategy';
import { API_KEY_STRATEGY } from '../../common/auth/guards';
import { OrganizationsService } from './organizations.service';

@Injectable()
export class ApiKeyStrategy extends PassportStrategy(BearerHeaderStrategy, API_KEY_STRATEGY) {
  constructor(private readonly organizations: OrganizationsService) {
    super();
  }

  async validate(token: string) {
    return (await this.organizations.authenticate(token)) ?? false;
  }
}
