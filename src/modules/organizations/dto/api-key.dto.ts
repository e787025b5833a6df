import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { Role, ROLES } from '../../../common/auth/principal';
import { formatUtc } from '../../../common/time';
import type { ApiKey } from '../api-key.entity';
import { pick } from '../../../common/pick';

export class CreateApiKeyDto {
  /** A label to tell keys apart, e.g. "backend production". */
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  /** `read` for GETs, `write` for data writes, `admin` for current-organization settings (implies both). */
  @ApiProperty({ enum: ROLES, isArray: true, example: ['read'] })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(3)
  @IsIn(ROLES, { each: true })
  roles: Role[];
}

export class CreatedApiKeyDto {
  id: string;
  name: string;
  @ApiProperty({ enum: ROLES, isArray: true })
  roles: Role[];
  /** The secret key. It appears only in this answer: store it now. */
  key: string;
  /** The first characters of the key, shown in lists and audit entries. */
  keyPrefix: string;
  createdAtUtc: string;

  static from(apiKey: ApiKey, key: string): CreatedApiKeyDto {
    return {
      id: apiKey.id,
      name: apiKey.name,
      roles: apiKey.roles,
      key,
      keyPrefix: apiKey.keyPrefix,
      createdAtUtc: formatUtc(apiKey.createdAt),
    };
  }
}

export class ApiKeyDto {
  id: string;
  name: string;
  @ApiProperty({ enum: ROLES, isArray: true })
  roles: Role[];
  keyPrefix: string;
  createdAtUtc: string;
  /** When the key was revoked; null while it is active. */
  revokedAtUtc: string | null;

  static from(apiKey: ApiKey): ApiKeyDto {
    return {
      ...pick(apiKey, 'id', 'name', 'roles', 'keyPrefix'),
      createdAtUtc: formatUtc(apiKey.createdAt),
      revokedAtUtc: formatUtc(apiKey.revokedAt),
    };
  }
}

export class ApiKeyPageDto {
  apiKeys: ApiKeyDto[];
  nextPageKey: string | null;
}
