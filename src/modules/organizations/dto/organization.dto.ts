import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { formatUtc } from '../../../common/time';
import type { Organization } from '../organization.entity';

export class CreateOrganizationDto {
  /** Display name of the organization. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;
}

export class OrganizationDto {
  id: string;
  name: string;
  createdAtUtc: string;

  static from(organization: Organization): OrganizationDto {
    return { id: organization.id, name: organization.name, createdAtUtc: formatUtc(organization.createdAt) };
  }
}

export class OrganizationPageDto {
  organizations: OrganizationDto[];
  /** Key of the next page; null on the last page. */
  nextPageKey: string | null;
}
