import { Migration20261122000000Foundation } from './Migration20261122000000Foundation';
import { Migration20261122005000DomainEvents } from './Migration20261122005000DomainEvents';
import { Migration20261122010000NftData } from './Migration20261122010000NftData';
import { Migration20261122020000Whitelist } from './Migration20261122020000Whitelist';
import { Migration20261122030000WebhookConfig } from './Migration20261122030000WebhookConfig';
import { Migration20261122040000WebhookDelivery } from './Migration20261122040000WebhookDelivery';
import { Migration20261123100000AuditChain } from './Migration20261123100000AuditChain';
import { Migration20261123110000WebhookSecretRotation } from './Migration20261123110000WebhookSecretRotation';
import { Migration20261123200000WebhookEndpoints } from './Migration20261123200000WebhookEndpoints';
import { Migration20261123210000WebhookStats } from './Migration20261123210000WebhookStats';
import { Migration20261125000000ChainLedger } from './Migration20261125000000ChainLedger';
import { Migration20261125010000Chain } from './Migration20261125010000Chain';
import { Migration20261125020000OneEndpointTable } from './Migration20261125020000OneEndpointTable';
import { Migration20261125030000AuditImmutable } from './Migration20261125030000AuditImmutable';
import { Migration20261126000000TimePartitions } from './Migration20261126000000TimePartitions';
import { Migration20261126031500TraceContext } from './Migration20261126031500TraceContext';
import { Migration20261126040000OrderedDelivery } from './Migration20261126040000OrderedDelivery';

/** Applied in this order; add each new migration here (one line each). */
export const MIGRATIONS = [
  { name: 'Migration20261122000000Foundation', class: Migration20261122000000Foundation },
  { name: 'Migration20261122005000DomainEvents', class: Migration20261122005000DomainEvents },
  { name: 'Migration20261122010000NftData', class: Migration20261122010000NftData },
  { name: 'Migration20261122020000Whitelist', class: Migration20261122020000Whitelist },
  { name: 'Migration20261122030000WebhookConfig', class: Migration20261122030000WebhookConfig },
  { name: 'Migration20261122040000WebhookDelivery', class: Migration20261122040000WebhookDelivery },
  { name: 'Migration20261123100000AuditChain', class: Migration20261123100000AuditChain },
  { name: 'Migration20261123110000WebhookSecretRotation', class: Migration20261123110000WebhookSecretRotation },
  { name: 'Migration20261123200000WebhookEndpoints', class: Migration20261123200000WebhookEndpoints },
  { name: 'Migration20261123210000WebhookStats', class: Migration20261123210000WebhookStats },
  { name: 'Migration20261125000000ChainLedger', class: Migration20261125000000ChainLedger },
  { name: 'Migration20261125010000Chain', class: Migration20261125010000Chain },
  { name: 'Migration20261125020000OneEndpointTable', class: Migration20261125020000OneEndpointTable },
  { name: 'Migration20261125030000AuditImmutable', class: Migration20261125030000AuditImmutable },
  { name: 'Migration20261126000000TimePartitions', class: Migration20261126000000TimePartitions },
  { name: 'Migration20261126031500TraceContext', class: Migration20261126031500TraceContext },
  { name: 'Migration20261126040000OrderedDelivery', class: Migration20261126040000OrderedDelivery },
];
