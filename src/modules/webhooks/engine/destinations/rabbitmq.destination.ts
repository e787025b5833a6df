import { connect, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import { expandTemplate } from '../../../webhook-endpoints/destination.rules';
import { BrokerDestination, BrokerRefusal } from './broker-destination';
import type { OutboundMessage } from './destination';

interface AmqpConnection {
  model: ChannelModel;
  channel: ConfirmChannel;
  /** Message ids the broker returned as unroutable; a return always comes before its ack. */
  returned: Set<string>;
  /** Why the broker closed the channel (e.g. `404 (NOT-FOUND) ... no exchange`), once it did. */
  closedBecause: string | null;
  closed: boolean;
}

/**
 * RabbitMQ (AMQP 0-9-1): each message published on a confirm channel to the endpoint's exchange
 * under its routing key template, `mandatory` and persistent (delivery mode 2), `messageId` = the
 * webhook id, the webhook's headers in the AMQP headers table. Success is the broker's ack; a
 * returned (unroutable) message is a failed attempt with `NO_ROUTE`, a nack, a channel error (no
 * such exchange, access refused) or a lost connection a failed attempt naming it.
 */
export class RabbitMqDestination extends BrokerDestination<AmqpConnection> {
  protected async connect(lost: () => void): Promise<AmqpConnection> {
    const tls = this.endpoint.tls;
    const model = await connect(this.endpoint.destination.connectUrl, {
      timeout: this.options.timeoutMs,
      ...(tls === null
        ? {}
        : { cert: tls.clientCertificate, key: tls.clientKey, ...(tls.caCertificate === null ? {} : { ca: [tls.caCertificate] }) }),
    });
    let channel: ConfirmChannel;
    try {
      channel = await model.createConfirmChannel();
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
    const returned = new Set<string>();
    channel.on('return', (message: Message) => {
      const id: unknown = message.properties.messageId;
      if (typeof id === 'string') returned.add(id);
    });
    // A channel error (a missing exchange, a refused permission) closes the channel: the pending
    // publishes fail with it, and the next attempt opens a new connection. Errors are reported
    // through the attempts, never thrown at the process.
    const connection: AmqpConnection = { model, channel, returned, closedBecause: null, closed: false };
    const end = () => {
      if (connection.closed) return;
      connection.closed = true;
      lost();
      void model.close().catch(() => undefined);
    };
    channel.on('error', (error: Error) => (connection.closedBecause ??= error.message));
    channel.on('close', end);
    model.on('error', (error: Error) => (connection.closedBecause ??= error.message));
    model.on('close', end);
    return connection;
  }

  protected publish(connection: AmqpConnection, message: OutboundMessage): Promise<string> {
    const settings = this.endpoint.destination.settings;
    if (settings.type !== 'rabbitmq') throw new Error(`a ${settings.type} destination reached the RabbitMQ transport`);
    const routingKey = expandTemplate('rabbitmq', settings.routingKey, message.fields);
    const headers = { ...message.headersAt(message.signedAt), 'content-type': 'application/json' };
    connection.returned.delete(message.webhookId);
    return new Promise<string>((resolve, reject) => {
      try {
        connection.channel.publish(
          settings.exchange,
          routingKey,
          Buffer.from(message.body, 'utf8'),
          {
            mandatory: true,
            persistent: true,
            messageId: message.webhookId,
            contentType: 'application/json',
            headers,
          },
          (error: unknown) => {
            const wasReturned = connection.returned.delete(message.webhookId);
            if (error && connection.closedBecause !== null) {
              reject(new BrokerRefusal(`the broker closed the channel: ${connection.closedBecause}`));
            } else if (error && connection.closed) {
              reject(new Error(`the connection was lost before the broker confirmed the message: ${describe(error)}`));
            } else if (error) {
              reject(new BrokerRefusal(`the broker refused the message (nack): ${describe(error)}`, 'nack'));
            } else if (wasReturned) {
              reject(
                new BrokerRefusal(
                  'NO_ROUTE',
                  `returned: no queue is bound to exchange "${settings.exchange}" for routing key "${routingKey}"`,
                ),
              );
            } else {
              resolve('ack');
            }
          },
        );
      } catch (error) {
        // amqplib throws at once for a closed channel or a header table too large to encode.
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  protected async disconnect(connection: AmqpConnection): Promise<void> {
    await connection.model.close();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
