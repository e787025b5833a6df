import { Body, Controller, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey, ReqMeta, RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { RotateSecretDto } from './dto/rotate-secret.request.dto';
import { RotateSecretResponseDto } from './dto/rotate-secret.response.dto';
import { UpdateWebhookConfigDto } from './dto/update-webhook-config.request.dto';
import { WebhookConfigDto } from './dto/webhook-config.response.dto';
import { WebhookConfigService } from './webhook-config.service';

@ApiTags('Webhook configuration')
@Auth('admin')
@Controller('api/organization/v1/current-organization/webhook-config')
export class WebhookConfigController {
  constructor(private readonly webhookConfig: WebhookConfigService) {}

  @Get()
  @ApiOperation({ operationId: 'getWebhookConfig', summary: "The organization's webhook configuration (the shared secret is never shown)" })
  @ApiOkResponse({ type: WebhookConfigDto })
  async get(@CurrentKey() key: ApiKeyPrincipal): Promise<WebhookConfigDto> {
    return WebhookConfigDto.from(await this.webhookConfig.get(key.organizationId));
  }

  @Patch()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'updateWebhookConfig',
    summary: 'Change any subset of url, enabled, sharedSecret and webhookTypes',
    description:
      'Fields left out keep their value; an empty body changes nothing. `url` and `sharedSecret` may be ' +
      'null to clear them while the configuration is disabled. A rejected request changes nothing.',
  })
  @ApiOkResponse({ type: WebhookConfigDto })
  @ApiUnprocessableEntityResponse({
    description: 'WEBHOOK_CONFIG_INCOMPLETE: the change would leave the configuration enabled without url or shared secret.',
  })
  async update(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: UpdateWebhookConfigDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookConfigDto> {
    const view = await this.webhookConfig.update(key.organizationId, body ?? {}, key, meta);
    return WebhookConfigDto.from(view);
  }

  @Post('rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateWebhookConfigSecret',
    summary: 'Replace the shared secret while the old one keeps signing for a while',
    description:
      'The new secret (given, or generated and returned once) signs every webhook from now on. Until ' +
      '`previousSecretExpiresAtUtc` the replaced secret signs too: `x-service-webhook-hmac-previous` and a ' +
      'second `v1,` entry in `webhook-signature`, so receivers can switch without an unverifiable webhook. ' +
      'Rotating again during the overlap drops the older secret. A PATCH of `sharedSecret` replaces the ' +
      'secret at once instead and drops any previous one.',
  })
  @ApiOkResponse({ type: RotateSecretResponseDto })
  @ApiUnprocessableEntityResponse({ description: 'WEBHOOK_CONFIG_INCOMPLETE: there is no shared secret to rotate yet.' })
  async rotateSecret(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: RotateSecretDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<RotateSecretResponseDto> {
    return RotateSecretResponseDto.from(await this.webhookConfig.rotateSecret(key.organizationId, body ?? {}, key, meta));
  }
}
