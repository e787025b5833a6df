import { DomainError } from '../../common/errors/domain-error';
import {
  connectableDestinationUrl,
  credentialsAfter,
  destinationHostPort,
  expandTemplate,
  maskedDestinationUrl,
  parseDestinationInput,
  templateProblem,
} from './destination.rules';

const fields = { webhookType: 'nft', action: 'create', resourceType: 'Token', resourceId: 'r-1', organizationId: 'org-1' };

/** The fields a refused destination names. */
function refusedFields(input: unknown): string[] {
  try {
    parseDestinationInput(input);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return ((error as DomainError).errors ?? []).map((e) => e.field);
  }
  throw new Error('expected a refusal');
}

describe('destination rules', () => {
  describe('parsing a request', () => {
    it('takes each type, keeping the credentials apart from the url', () => {
      expect(
        parseDestinationInput({
          type: 'rabbitmq',
          url: 'amqp://guest:p%40ss@127.0.0.1:5672/vh',
          exchange: '',
          routingKey: 'webhooks.{webhookType}',
        }),
      ).toEqual({
        settings: { type: 'rabbitmq', url: 'amqp://127.0.0.1:5672/vh', exchange: '', routingKey: 'webhooks.{webhookType}' },
        credentials: { username: 'guest', password: 'p@ss' },
        keepsPassword: false,
      });
      expect(parseDestinationInput({ type: 'nats', url: 'nats://n.example:4222', subject: 'a.{action}', stream: 'S' }).settings).toEqual({
        type: 'nats',
        url: 'nats://n.example:4222',
        subject: 'a.{action}',
        stream: 'S',
      });
      const mqtt = parseDestinationInput({ type: 'mqtt', url: 'mqtts://u@m.example', topic: 'w/{resourceId}', qos: 1 });
      expect(mqtt.credentials).toEqual({ username: 'u', password: null });
      expect(parseDestinationInput({ type: 'mqtt', url: 'mqtt://u:***@m', topic: 't', qos: 1 }).keepsPassword).toBe(true);
    });

    it('names each refused field', () => {
      expect(refusedFields({ type: 'kafka', url: 'x' })).toEqual(['destination.type']);
      expect(refusedFields([])).toEqual(['destination']);
      expect(refusedFields({ type: 'rabbitmq', url: 'nats://h', exchange: 'x', routingKey: 'k' })).toEqual(['destination.url']);
      expect(refusedFields({ type: 'nats', url: 'nats://h', subject: 's' })).toEqual(['destination.stream']);
      expect(refusedFields({ type: 'nats', url: 'nats://h', subject: 's', stream: null })).toEqual(['destination.stream']);
      expect(refusedFields({ type: 'mqtt', url: 'mqtt://h', topic: 't', qos: 2 })).toEqual(['destination.qos']);
      expect(refusedFields({ type: 'mqtt', url: 'mqtt://h', topic: 't' })).toEqual(['destination.qos']);
      expect(refusedFields({ type: 'rabbitmq', url: 'amqp://h', routingKey: 'k' })).toEqual(['destination.exchange']);
      expect(refusedFields({ type: 'rabbitmq', url: 'amqp://h', exchange: 'bad name', routingKey: 'k' })).toEqual(['destination.exchange']);
      expect(refusedFields({ type: 'rabbitmq', url: 'amqp://h', exchange: 'x', routingKey: '{nope}' })).toEqual(['destination.routingKey']);
      expect(refusedFields({ type: 'nats', url: 'nats://h', subject: 'a.*', stream: 'S' })).toEqual(['destination.subject']);
      expect(refusedFields({ type: 'mqtt', url: 'mqtt://h', topic: 'a/#', qos: 1 })).toEqual(['destination.topic']);
      expect(refusedFields({ type: 'mqtt', url: 'mqtt://h/path', topic: 't', qos: 1 })).toEqual(['destination.url']);
      expect(refusedFields({ type: 'mqtt', url: 'mqtt://h?x=1', topic: 't', qos: 1 })).toEqual(['destination.url']);
      expect(refusedFields({ type: 'mqtt', url: 'mqtt://h', topic: 't', qos: 1, exchange: 'x' })).toEqual(['destination.exchange']);
      expect(refusedFields({ type: 'nats', subject: 's', stream: 'a.b' })).toEqual(['destination.url', 'destination.stream']);
    });
  });

  describe('templates', () => {
    it('refuses unknown placeholders, over-long templates and names the type cannot take', () => {
      expect(templateProblem('rabbitmq', 'a.{webhookType}.{action}.{resourceType}.{resourceId}.{organizationId}')).toBeNull();
      expect(templateProblem('rabbitmq', '{webhooktype}')).toMatch(/unknown placeholder \{webhooktype\}/);
      expect(templateProblem('rabbitmq', 'x'.repeat(256))).toMatch(/255/);
      expect(templateProblem('rabbitmq', '')).toBeNull();
      expect(templateProblem('nats', 'a..b')).toMatch(/empty token/);
      expect(templateProblem('nats', '.a')).toMatch(/empty token/);
      expect(templateProblem('nats', 'a b')).toMatch(/spaces/);
      expect(templateProblem('nats', 'a.>')).toMatch(/wildcards/);
      expect(templateProblem('nats', '{webhookType}')).toBeNull();
      expect(templateProblem('mqtt', 'a/+/b')).toMatch(/wildcards/);
      expect(templateProblem('mqtt', 'a\0b')).toMatch(/NUL/);
      expect(templateProblem('mqtt', '')).toMatch(/empty/);
      // Lone braces are literal text.
      expect(templateProblem('mqtt', 'a{b')).toBeNull();
    });

    it('expands placeholders, keeping literal text and the shape of subjects and topics', () => {
      expect(expandTemplate('rabbitmq', 'w.{webhookType}.{action}', fields)).toBe('w.nft.create');
      expect(expandTemplate('nats', '{organizationId}.{resourceType}', fields)).toBe('org-1.Token');
      expect(expandTemplate('nats', 'w.{resourceId}', { ...fields, resourceId: 'a.b c*' })).toBe('w.a_b_c_');
      expect(expandTemplate('mqtt', 'w/{resourceId}', { ...fields, resourceId: 'a/b+#' })).toBe('w/a_b__');
      expect(expandTemplate('mqtt', 'w/{action}', { ...fields, action: '' })).toBe('w/_');
      expect(expandTemplate('rabbitmq', '{a}{', fields)).toBe('{a}{');
    });
  });

  describe('urls', () => {
    it('masks the password, keeps the user, and puts both back to connect', () => {
      const bare = 'amqp://rabbit.example:5672/vh';
      expect(maskedDestinationUrl(bare, { username: 'svc', password: 's3cret' })).toBe('amqp://svc:***@rabbit.example:5672/vh');
      expect(maskedDestinationUrl(bare, { username: 'svc', password: null })).toBe('amqp://svc@rabbit.example:5672/vh');
      expect(maskedDestinationUrl(bare, null)).toBe(bare);
      expect(connectableDestinationUrl(bare, { username: 'a b', password: 'p@ss:/' })).toBe(
        'amqp://a%20b:p%40ss%3A%2F@rabbit.example:5672/vh',
      );
    });

    it('keeps the stored password when the url sends back ***', () => {
      const stored = { username: 'old', password: 'kept' };
      const parsed = parseDestinationInput({ type: 'nats', url: 'nats://new:***@h:4222', subject: 's', stream: 'S' });
      expect(credentialsAfter(parsed, stored)).toEqual({ username: 'new', password: 'kept' });
      const replaced = parseDestinationInput({ type: 'nats', url: 'nats://new:fresh@h:4222', subject: 's', stream: 'S' });
      expect(credentialsAfter(replaced, stored)).toEqual({ username: 'new', password: 'fresh' });
      const none = parseDestinationInput({ type: 'nats', url: 'nats://h:4222', subject: 's', stream: 'S' });
      expect(credentialsAfter(none, stored)).toBeNull();
    });

    it('reads host:port as written, the default port when none is', () => {
      expect(destinationHostPort('amqp://Rabbit.Internal/vh')).toEqual({ hostname: 'rabbit.internal', hostPort: 'rabbit.internal:5672' });
      expect(destinationHostPort('amqps://10.0.0.7')).toEqual({ hostname: '10.0.0.7', hostPort: '10.0.0.7:5671' });
      expect(destinationHostPort('nats://[fd00::1]:4333')).toEqual({ hostname: 'fd00::1', hostPort: '[fd00::1]:4333' });
      expect(destinationHostPort('mqtts://m.example').hostPort).toBe('m.example:8883');
    });
  });
});
