import { ApiProperty } from '@nestjs/swagger';
import { formatUtc } from '../../../common/time';
import type { SecretRotation } from '../webhook-endpoints.service';

export class RotateSecretResponseDto {
  /** The generated secret, shown only in this answer; absent when the request gave one. */
  @ApiProperty({ type: String, required: false, example: 'q0m5N1p8Hc3XoE7w2k3T9yJtC1dVq4fUeR6sZ8aB0gM' })
  sharedSecret?: string;

  /**
   * Until this instant the replaced secret signs too (`x-service-webhook-hmac-previous` and a second
   * `webhook-signature` entry); an attempt signed at or after it carries only the new secret.
   */
  previousSecretExpiresAtUtc: string;

  static from(rotation: SecretRotation): RotateSecretResponseDto {
    return {
      ...(rotation.sharedSecret === undefined ? {} : { sharedSecret: rotation.sharedSecret }),
      previousSecretExpiresAtUtc: formatUtc(rotation.previousSecretExpiresAt),
    };
  }
}
