import { ApiKey } from '../modules/organizations/api-key.entity';
import { AuditEntry } from '../modules/audit/audit-entry.entity';
import { DomainEvent } from '../modules/domain-events/domain-event.entity';
import { Organization } from '../modules/organizations/organization.entity';

/** Every entity, listed once: the app, the CLI and the migration runner discover the same set. */
export const ENTITIES = [
  Organization,
  ApiKey,
  AuditEntry,
  DomainEvent,
];
