import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, ValidateNested } from 'class-validator';
import { TokenMetadataRequestDto } from './token-metadata.request.dto';

export class UpdateTokenRequestDto {
  @ApiProperty({ type: TokenMetadataRequestDto, description: 'Fields to change; absent fields are kept, null clears.' })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => TokenMetadataRequestDto)
  metadata: TokenMetadataRequestDto;
}
