import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import { DomainError, unprocessable } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { AppConfig } from '../../config/app-config';
import type { ResealReport } from '../../database/sealed-columns';
import { diffForAudit } from '../audit/audit.rules';
import { AuditActor, AuditService, SYSTEM_ACTOR } from '../audit/audit.service';
import { endpointOperational } from '../domain-events/domain-event.catalogue';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { Organization } from '../organizations/organization.entity';
import {
  assertComplete,
  assertDefaultEndpointFields,
  assertOneKind,
  assignSlots,
  assignTransport,
  AUDIT_SECRET_FIELDS,
  auditOf,
  AUTO_DISABLE_ACTION,
  CreatedEndpoint,
  destinationTransportAfter,
  EndpointRef,
  endpointNotFound,
  generateSharedSecret,
  organizationNotFound,
  patchOf,
  SecretRotation,
  WebhookEndpointInput,
} from './endpoint-change';
import { DeliveryTargetReader } from './delivery-target.reader';
import { EndpointInputs } from './endpoint-input';
import { parseContentFilter, parseContractAddressFilter } from './receiver-choices.rules';
import { parseCustomHeaders } from './receiver-options.rules';
import { dropPreviousSigningKeys, NO_SIGNING_KEYS, rotateSigningSlots, signingSlotsAfterSwitch } from './signing-keys.rules';
import {
  DEFAULT_PREVIOUS_SECRET_VALID_SECONDS,
  FAILING_DISABLED_REASON,
  replaceSecretSlots,
  rotateSecretSlots,
} from './webhook-config.rules';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import { auditedEndpoint, endpointTransport, TransportSlots } from './endpoint-transport.rules';
import {
  applyEndpointPatch,
  endpointLimitReached,
  endpointPagePlan,
  endpointSlots,
  endpointState,
  endpointView,
  isDefaultEndpoint,
  isEmptyPatch,
  MAX_ENDPOINTS_PER_ORGANIZATION,
  newEndpointState,
  unconfiguredDefault,
  WebhookEndpointView,
} from './webhook-endpoint.rules';

/**
 * The organization's webhook endpoints (docs/WEBHOOKS.md "Webhook endpoints"): the default one and the
 * others are rows of one table under one set of rules; `/webhook-config` is a view of the default
 * (see WebhookConfigService). Owns the secrets at rest, their cleanup and auto-disable.
 */
export type { CreatedEndpoint, EndpointRef, SecretRotation, WebhookEndpointInput } from './endpoint-change';
export { AUTO_DISABLE_ACTION, generateSharedSecret } from './endpoint-change';

@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly em: EntityManager,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly events: DomainEventPublisher,
    private readonly targets: DeliveryTargetReader,
  ) {
    this.inputs = new EndpointInputs(config);
  }

  /** What the API shows of a row: its destination's user opened (the password never is shown). */
  private view(row: WebhookEndpoint, now: Date): WebhookEndpointView {
    return endpointView(row, now, this.inputs.openCredentials(row.organizationId, row.destinationCredentialsSealed));
  }

  /** The transport of a row for the audit log, its destination's credentials opened to mask its url alike. */
  private transportOf(row: WebhookEndpoint): TransportSlots {
    return endpointTransport(row, this.inputs.openCredentials(row.organizationId, row.destinationCredentialsSealed));
  }

  /** Checks and seals what a request brings (URLs, secrets, keys, auth and tls settings). */
  private readonly inputs: EndpointInputs;

  /** One page: the default endpoint first, then the others in creation order. */
  async list(organizationId: string, pageSize: number, pageKey?: string): Promise<Page<WebhookEndpointView>> {
    const lastServed = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const plan = endpointPagePlan(organizationId, lastServed, pageSize);
    const now = new Date();
    const views: WebhookEndpointView[] = plan.includeDefault ? [await this.get(organizationId, organizationId)] : [];
    for (const row of await this.endpoints.pageOthers(organizationId, plan.afterId, plan.othersLimit)) views.push(this.view(row, now));
    return toPage(views, pageSize, (last) => encodePageKey([last.id]));
  }

  async get(organizationId: string, endpointId: string): Promise<WebhookEndpointView> {
    const view = await this.find(organizationId, endpointId);
    if (!view) throw endpointNotFound(endpointId);
    return view;
  }

  /** One endpoint of the organization (its default one always exists); null when there is no such endpoint. */
  async find(organizationId: string, endpointId: string): Promise<WebhookEndpointView | null> {
    const row = await this.endpoints.findOwned(organizationId, endpointId);
    if (row) return this.view(row, new Date());
    if (!isDefaultEndpoint(endpointId, organizationId)) return null;
    return endpointView(unconfiguredDefault(organizationId, await this.organizationCreatedAt(organizationId)), new Date());
  }

  /**
   * Adds an endpoint. The organization's default endpoint is locked first, so concurrent
   * creations count one after the other and the limit holds exactly.
   */
  async create(organizationId: string, input: WebhookEndpointInput, actor: AuditActor, meta: RequestMeta): Promise<CreatedEndpoint> {
    const contractAddresses = parseContractAddressFilter(input.filters?.contractAddresses);
    const filter = input.filter === undefined ? null : parseContentFilter(input.filter);
    const headers = input.headers === undefined ? {} : parseCustomHeaders(input.headers);
    const destination = input.destination == null ? null : await this.inputs.parseDestination(input.destination);
    const url = input.url ?? null;
    assertOneKind({ url, hasDestination: destination !== null, hasAuth: input.auth != null, isDefault: false });
    if (url !== null) await this.inputs.assertAcceptableUrl(url);
    const generated = input.sharedSecret === undefined ? generateSharedSecret() : undefined;
    const sealed = this.inputs.seal(organizationId, input.sharedSecret ?? (generated as string));
    const signing = signingSlotsAfterSwitch(NO_SIGNING_KEYS, input.signing?.asymmetric === true, () =>
      this.inputs.newKeyPair(organizationId),
    );
    const auth = await this.inputs.parseAuth(organizationId, input.auth);
    const tls = this.inputs.parseTls(organizationId, input.tls);

    const endpoint = await this.em.transactional(async (em) => {
      const endpoints = em.getRepository(WebhookEndpoint);
      if (!(await endpoints.lockForChange(organizationId, organizationId))) throw organizationNotFound(organizationId);
      if (endpointLimitReached(await endpoints.countOthers(organizationId))) {
        throw unprocessable(
          'ENDPOINT_LIMIT_REACHED',
          `An organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints, its default endpoint included; ` +
            'delete one before adding another.',
        );
      }
      const state = newEndpointState({
        ...patchOf(input, { contractAddresses, headers, filter }),
        url,
        webhookTypes: input.webhookTypes ?? [],
        contractAddresses,
      });
      const row = new WebhookEndpoint({ organizationId, ...state, url, sharedSecretSealed: sealed });
      assignTransport(row, {
        signing,
        auth: auth?.settings ?? null,
        authClientSecret: auth?.clientSecretSealed ?? null,
        tls: tls?.settings ?? null,
        tlsClientKey: tls?.clientKeySealed ?? null,
        ...destinationTransportAfter(destination, null, (credentials) => this.inputs.sealCredentials(organizationId, credentials)),
      });
      row.createdAt = row.updatedAt = new Date();
      em.persist(row);
      const entry = auditOf(
        row,
        'create',
        diffForAudit({}, auditedEndpoint(endpointState(row), endpointSlots(row), this.transportOf(row)), AUDIT_SECRET_FIELDS),
      );
      this.audit.record(em, { organizationId, actor, meta, ...entry });
      return row;
    });
    return { endpoint: this.view(endpoint, new Date()), ...(generated === undefined ? {} : { sharedSecret: generated }) };
  }

  /**
   * Applies a PATCH: fields left out keep their value, an empty one changes nothing. Input is
   * checked before any lock is taken (the hostname lookup may take a while); completeness is
   * judged under the row lock against the state the change produces.
   */
  async update(
    organizationId: string,
    endpointId: string,
    input: WebhookEndpointInput,
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<WebhookEndpointView> {
    if (isDefaultEndpoint(endpointId, organizationId)) assertDefaultEndpointFields(input);
    const contractAddresses = input.filters === undefined ? undefined : parseContractAddressFilter(input.filters?.contractAddresses);
    const filter = input.filter === undefined ? undefined : parseContentFilter(input.filter);
    const headers = input.headers === undefined ? undefined : parseCustomHeaders(input.headers);
    if (isEmptyPatch(input)) return this.get(organizationId, endpointId);
    const destination = input.destination == null ? input.destination : await this.inputs.parseDestination(input.destination);
    if (typeof input.url === 'string') await this.inputs.assertAcceptableUrl(input.url);
    const sealedSecret = typeof input.sharedSecret === 'string' ? this.inputs.seal(organizationId, input.sharedSecret) : input.sharedSecret;
    const auth = input.auth === undefined ? undefined : await this.inputs.parseAuth(organizationId, input.auth);
    const tls = input.tls === undefined ? undefined : this.inputs.parseTls(organizationId, input.tls);

    const view = await this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookEndpoint).lockForChange(organizationId, endpointId);
      if (!row) throw endpointNotFound(endpointId);
      const before = endpointState(row);
      const after = applyEndpointPatch(before, patchOf(input, { contractAddresses, headers, filter }));
      // A secret set by PATCH replaces the old one at once: any rotation's previous secret goes too.
      const slotsBefore = endpointSlots(row);
      const slotsAfter = sealedSecret !== undefined ? replaceSecretSlots(sealedSecret) : slotsBefore;
      const transportBefore = this.transportOf(row);
      let signingAfter =
        input.signing === undefined
          ? transportBefore.signing
          : signingSlotsAfterSwitch(transportBefore.signing, input.signing?.asymmetric === true, () =>
              this.inputs.newKeyPair(organizationId),
            );
      if (sealedSecret !== undefined) signingAfter = dropPreviousSigningKeys(signingAfter);
      const transportAfter: TransportSlots = {
        signing: signingAfter,
        auth: auth === undefined ? transportBefore.auth : (auth?.settings ?? null),
        authClientSecret: auth === undefined ? transportBefore.authClientSecret : (auth?.clientSecretSealed ?? null),
        tls: tls === undefined ? transportBefore.tls : (tls?.settings ?? null),
        tlsClientKey: tls === undefined ? transportBefore.tlsClientKey : (tls?.clientKeySealed ?? null),
        ...destinationTransportAfter(destination, transportBefore, (c) => this.inputs.sealCredentials(organizationId, c)),
      };
      const hasDestination = transportAfter.destination !== null;
      assertOneKind({ url: after.url, hasDestination, hasAuth: transportAfter.auth !== null, isDefault: row.isDefault });
      assertComplete(after, slotsAfter, transportAfter.destination !== null);
      // A new secret always counts as a change (the sealed values differ), and is shown only as redacted.
      const changes = diffForAudit(
        auditedEndpoint(before, slotsBefore, transportBefore),
        auditedEndpoint(after, slotsAfter, transportAfter),
        AUDIT_SECRET_FIELDS,
      );
      const now = new Date();
      if (Object.keys(changes).length === 0) return this.view(row, now);

      Object.assign(row, after);
      assignSlots(row, slotsAfter);
      assignTransport(row, transportAfter);
      row.updatedAt = now;
      this.audit.record(em, { organizationId, actor, meta, ...auditOf(row, 'update', changes) });
      // Switched by this PATCH: the organization's other endpoints hear of it (a PATCH keeping `enabled` sends nothing).
      if (before.enabled !== after.enabled) {
        this.events.publish(em, organizationId, endpointOperational(endpointId, after.enabled ? 'enabled' : 'disabled'));
      }
      return this.view(row, now);
    });
    // This process's connection to a changed broker closes now; other workers see the change in their next read.
    if (destination !== undefined) this.targets.destinationChanged(endpointId);
    return view;
  }

  /** Deletes an endpoint other than the default one (disable that one instead). */
  async delete(organizationId: string, endpointId: string, actor: AuditActor, meta: RequestMeta): Promise<void> {
    if (isDefaultEndpoint(endpointId, organizationId)) {
      throw unprocessable(
        'DEFAULT_ENDPOINT',
        'The default endpoint is the webhook configuration and cannot be deleted; disable it with PATCH instead.',
      );
    }
    await this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookEndpoint).lockForChange(organizationId, endpointId);
      if (!row) throw endpointNotFound(endpointId);
      const changes = diffForAudit(auditedEndpoint(endpointState(row), endpointSlots(row), this.transportOf(row)), {}, AUDIT_SECRET_FIELDS);
      em.remove(row);
      this.audit.record(em, { organizationId, actor, meta, ...auditOf(row, 'delete', changes) });
    });
    this.targets.destinationChanged(endpointId);
  }

  /**
   * Replaces the shared secret while the old one keeps signing beside it for
   * `previousSecretValidSeconds` (docs/WEBHOOKS.md "Rotating the shared secret"), so receivers can
   * switch at their own pace without an unverifiable webhook. Without `sharedSecret` one is
   * generated (32 random bytes, base64url) and returned once.
   */
  async rotateSecret(
    organizationId: string,
    endpointId: string,
    input: { sharedSecret?: string; previousSecretValidSeconds?: number },
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<SecretRotation> {
    const generated = input.sharedSecret === undefined ? generateSharedSecret() : undefined;
    const sealed = this.inputs.seal(organizationId, input.sharedSecret ?? (generated as string));
    const validSeconds = input.previousSecretValidSeconds ?? DEFAULT_PREVIOUS_SECRET_VALID_SECONDS;

    return this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookEndpoint).lockForChange(organizationId, endpointId);
      if (!row) throw endpointNotFound(endpointId);
      const now = new Date();
      const slotsBefore = endpointSlots(row);
      const rotation = rotateSecretSlots(slotsBefore, sealed, validSeconds, now);
      // Only a default endpoint can be without a secret (the others get one when created).
      if (rotation === null) {
        throw new DomainError(
          422,
          'WEBHOOK_CONFIG_INCOMPLETE',
          'There is no shared secret to rotate; set one with PATCH webhook-config first.',
          [{ field: 'sharedSecret', message: 'is required before it can be rotated' }],
        );
      }
      const state = endpointState(row);
      // An endpoint that signs asymmetrically gets a new key pair too, the old one overlapping like the old secret.
      const transportBefore = this.transportOf(row);
      const signingBefore = transportBefore.signing;
      const transportAfter: TransportSlots = {
        ...transportBefore,
        signing:
          signingBefore.privateKey === null
            ? signingBefore
            : rotateSigningSlots(signingBefore, this.inputs.newKeyPair(organizationId), rotation.slots.previousSharedSecret !== null),
      };
      const changes = diffForAudit(
        auditedEndpoint(state, slotsBefore, transportBefore),
        auditedEndpoint(state, rotation.slots, transportAfter),
        AUDIT_SECRET_FIELDS,
      );
      assignSlots(row, rotation.slots);
      assignTransport(row, transportAfter);
      row.updatedAt = now;
      this.audit.record(em, { organizationId, actor, meta, ...auditOf(row, 'rotateSecret', changes) });
      return { ...(generated === undefined ? {} : { sharedSecret: generated }), previousSecretExpiresAt: rotation.previousSecretExpiresAt };
    });
  }

  /**
   * Erases every previous secret whose window has closed (delivery already ignores them from the
   * expiry instant on; this removes them from storage). Returns how many were erased.
   */
  eraseExpiredPreviousSecrets(now = new Date()): Promise<number> {
    // Runs on a timer, outside any request: its own EntityManager.
    return this.em.fork().getRepository(WebhookEndpoint).erasePreviousSecretsExpiredBy(now);
  }

  /**
   * Switches off, with `disabledReason: "failing"`, each given endpoint that is still enabled, and
   * records each in the organization's audit log with the system as actor. Returns the endpoints
   * it actually switched off: one already off, deleted, or not the organization's is left alone.
   * Each endpoint is its own transaction, so a concurrent PATCH is judged before or after it, never lost.
   */
  async disableFailingEndpoints(endpoints: EndpointRef[], now: Date): Promise<EndpointRef[]> {
    const disabled: EndpointRef[] = [];
    const seen = new Set<string>();
    for (const { organizationId, endpointId } of endpoints) {
      const key = `${organizationId}/${endpointId}`.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      // Runs from a sweep, outside any request: its own EntityManager.
      const done = await this.em.fork().transactional(async (em) => {
        if (!(await em.getRepository(WebhookEndpoint).disableIfEnabled(organizationId, endpointId, FAILING_DISABLED_REASON, now)))
          return false;
        this.audit.record(em, {
          organizationId,
          action: AUTO_DISABLE_ACTION,
          actor: SYSTEM_ACTOR,
          meta: { requestId: null, ip: null },
          changes: {
            endpointId: { from: endpointId, to: endpointId },
            enabled: { from: true, to: false },
            disabledReason: { from: null, to: FAILING_DISABLED_REASON },
          },
        });
        this.events.publish(em, organizationId, endpointOperational(endpointId, 'disabled', FAILING_DISABLED_REASON));
        return true;
      });
      if (done) disabled.push({ organizationId, endpointId });
    }
    return disabled;
  }

  /**
   * Re-seals this module's stored secrets with the current encryption key (`secrets:reseal`);
   * safe while the service runs, and resumable.
   */
  resealSecrets(batchSize?: number): Promise<ResealReport[]> {
    return this.em.fork().getRepository(WebhookEndpoint).resealSecrets(this.config.secretsEncryptionKey, batchSize);
  }

  /** When the organization was created (its default endpoint's creation time); 404 when it does not exist. */
  private async organizationCreatedAt(organizationId: string): Promise<Date> {
    const createdAt = await this.em.getRepository(Organization).createdAtOf(organizationId);
    if (createdAt === null) throw organizationNotFound(organizationId);
    return createdAt;
  }
}
