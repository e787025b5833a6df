import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsDefined, IsIn, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { MAX_WEBHOOK_URL_LENGTH } from '../../../common/net/url-policy';
import { WEBHOOK_TYPES } from '../../domain-events/domain-event.catalogue';
import { ENDPOINT_ORDERINGS } from '../webhook-endpoint.rules';

/**
 * The request rules of the fields every endpoint has, shared by `/webhook-config` (the default
 * endpoint) and `/webhook-endpoints`: one place for each limit. `required` fields must be sent;
 * `nullable` ones take null to clear them; the others are checked only when sent (an explicit
 * null is then refused like any other wrong type).
 */
interface FieldOptions {
  required?: boolean;
  nullable?: boolean;
}

function presence({ required = false, nullable = false }: FieldOptions): PropertyDecorator {
  if (required) return IsDefined();
  return ValidateIf((_dto: object, value: unknown) => (nullable ? value != null : value !== undefined));
}

/** An absolute http(s) URL of at most 2,048 characters (the URL policy is checked by the service). */
export const UrlField = (options: FieldOptions = {}) =>
  applyDecorators(
    ApiProperty({
      type: String,
      required: options.required ?? false,
      ...(options.nullable ? { nullable: true } : {}),
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      example: 'https://example.com/webhooks',
    }),
    presence(options),
    IsString(),
    MaxLength(MAX_WEBHOOK_URL_LENGTH),
  );

/** A signing secret of 16 to 256 characters, write-only. */
export const SharedSecretField = (options: FieldOptions = {}) =>
  applyDecorators(
    ApiProperty({
      type: String,
      required: options.required ?? false,
      ...(options.nullable ? { nullable: true } : {}),
      minLength: 16,
      maxLength: 256,
      writeOnly: true,
    }),
    presence(options),
    IsString(),
    Length(16, 256),
  );

/** The sending switch. */
export const EnabledField = () => applyDecorators(ApiProperty({ type: Boolean, required: false }), presence({}), IsBoolean());

/** The webhook types to receive, each at most once; `[]` receives none. */
export const WebhookTypesField = (options: FieldOptions = {}) =>
  applyDecorators(
    ApiProperty({
      enum: WEBHOOK_TYPES,
      isArray: true,
      required: options.required ?? false,
      example: ['transaction', 'nft'],
      description:
        'The webhook types to receive, each at most once; `[]` receives none. The service sends custodialAccount, ' +
        "nft and transaction; payment, kyc and document are reserved for the integrator's own platform and arrive " +
        'only as test webhooks.',
    }),
    presence(options),
    IsArray(),
    ArrayMaxSize(WEBHOOK_TYPES.length),
    ArrayUnique({ message: 'webhookTypes must not contain duplicates' }),
    IsIn(WEBHOOK_TYPES, { each: true }),
  );

/** `none` (the default) or `resource`: the webhooks of one resource one at a time, in event order. */
export const OrderingField = () =>
  applyDecorators(
    ApiProperty({
      enum: ENDPOINT_ORDERINGS,
      required: false,
      example: 'resource',
      description:
        '`none` (default): each webhook is sent as soon as it can be. `resource`: the webhooks of one `resourceId` are sent ' +
        'one at a time in event order (the next waits until the previous one succeeded or ended failed; waiting is not an ' +
        'attempt), each carrying `x-service-webhook-sequence`: 1, 2, 3… per endpoint and resourceId, the same on every retry.',
    }),
    presence({}),
    IsIn(ENDPOINT_ORDERINGS, { message: `ordering must be one of: ${ENDPOINT_ORDERINGS.join(', ')}` }),
  );
