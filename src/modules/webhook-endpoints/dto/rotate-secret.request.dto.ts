import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsString, Length, Max, Min, ValidateIf } from 'class-validator';
import { MAX_PREVIOUS_SECRET_VALID_SECONDS } from '../webhook-config.rules';

// Left out means the default; an explicit null is refused like any other wrong type.
const present = (field: string) => (dto: object) => (dto as Record<string, unknown>)[field] !== undefined;

export class RotateSecretDto {
  /**
   * The new secret, 16 to 256 characters. Left out, the service generates one (32 random bytes,
   * base64url) and returns it once in the answer.
   */
  @ApiProperty({ type: String, required: false, minLength: 16, maxLength: 256, writeOnly: true })
  @ValidateIf(present('sharedSecret'))
  @IsString()
  @Length(16, 256)
  sharedSecret?: string;

  /**
   * How long the replaced secret keeps signing beside the new one, in seconds (0 to 604800, default
   * 86400). 0 stops it at once.
   */
  @ApiProperty({ type: 'integer', required: false, minimum: 0, maximum: MAX_PREVIOUS_SECRET_VALID_SECONDS, default: 86_400 })
  @ValidateIf(present('previousSecretValidSeconds'))
  @IsInt()
  @Min(0)
  @Max(MAX_PREVIOUS_SECRET_VALID_SECONDS)
  previousSecretValidSeconds?: number;
}
