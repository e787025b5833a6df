import { connect, headers as natsHeaders, type JetStreamClient, type NatsConnection } from 'nats';
import { expandTemplate } from '../../../webhook-endpoints/destination.rules';
import { BrokerDestination, BrokerRefusal } from './broker-destination';
import type { OutboundMessage } from './destination';

interface NatsSession {
  connection: NatsConnection;
  jetstream: JetStreamClient;
}

/**
 * NATS JetStream: each message published to the endpoint's subject template with `Nats-Msg-Id` =
 * the webhook id, so the stream drops a retried, redelivered or replayed copy inside its duplicate
 * window. Success is a PubAck from the endpoint's `stream` (`duplicate: true` included: the stream
 * holds the message once). No stream taking the subject, another stream's PubAck, or no PubAck in
 * time is a failed attempt. TLS is used when the server asks for it (and with the endpoint's
 * client certificate when it has one).
 */
export class NatsDestination extends BrokerDestination<NatsSession> {
  protected async connect(lost: () => void): Promise<NatsSession> {
    const url = new URL(this.endpoint.destination.connectUrl);
    const tls = this.endpoint.tls;
    const connection = await connect({
      servers: url.host,
      ...(url.username === '' ? {} : { user: decodeURIComponent(url.username) }),
      ...(url.password === '' ? {} : { pass: decodeURIComponent(url.password) }),
      name: 'nft-wallet-webhooks',
      timeout: this.options.timeoutMs,
      // A lost connection is dropped, not retried in the background: the next attempt opens a new
      // one, and attempts made meanwhile fail and retry on the endpoint's schedule.
      reconnect: false,
      ...(tls === null
        ? {}
        : { tls: { cert: tls.clientCertificate, key: tls.clientKey, ...(tls.caCertificate === null ? {} : { ca: tls.caCertificate }) } }),
    });
    void connection.closed().then(lost, lost);
    return { connection, jetstream: connection.jetstream() };
  }

  protected async publish(session: NatsSession, message: OutboundMessage, timeoutMs: number): Promise<string> {
    const settings = this.endpoint.destination.settings;
    if (settings.type !== 'nats') throw new Error(`a ${settings.type} destination reached the NATS transport`);
    const subject = expandTemplate('nats', settings.subject, message.fields);
    const headers = natsHeaders();
    for (const [name, value] of Object.entries({ ...message.headersAt(message.signedAt), 'content-type': 'application/json' })) {
      headers.set(name, value);
    }
    let ack;
    try {
      ack = await session.jetstream.publish(subject, Buffer.from(message.body, 'utf8'), {
        msgID: message.webhookId,
        headers,
        timeout: timeoutMs,
        // The server refuses a message that another stream would take: only this stream's PubAck counts.
        expect: { streamName: settings.stream },
      });
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (e.code === '503') throw new BrokerRefusal(`no JetStream stream takes subject "${subject}" (no responders)`);
      if (e.code === 'TIMEOUT') throw new BrokerRefusal(`no PubAck from stream "${settings.stream}" within ${timeoutMs} ms`);
      if (/stream|expected/i.test(e.message ?? '')) throw new BrokerRefusal(`the stream refused the message: ${e.message}`);
      throw error;
    }
    if (ack.stream !== settings.stream) {
      throw new BrokerRefusal(`the PubAck came from stream "${ack.stream}", not "${settings.stream}"`, pubAckText(ack));
    }
    return pubAckText(ack);
  }

  protected async disconnect(session: NatsSession): Promise<void> {
    await session.connection.close();
  }
}

/** The PubAck as the delivery log shows it: `{"stream":"X","seq":42}`, with `"duplicate":true` when the stream had it already. */
function pubAckText(ack: { stream: string; seq: number; duplicate: boolean }): string {
  return JSON.stringify({ stream: ack.stream, seq: ack.seq, ...(ack.duplicate ? { duplicate: true } : {}) });
}
