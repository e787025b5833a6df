import { randomBytes } from 'node:crypto';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { expandTemplate } from '../../../webhook-endpoints/destination.rules';
import { BrokerDestination, BrokerRefusal } from './broker-destination';
import type { OutboundMessage } from './destination';

/** Reason codes from 0x80 on refuse a publish (MQTT 5, section 3.4.2.1). */
const FIRST_REFUSAL_CODE = 0x80;

/**
 * MQTT 5: each message published to the endpoint's topic template at QoS 1, not retained, the
 * webhook's headers as user properties. Success is a PUBACK whose reason code is below 0x80 (0x10,
 * no matching subscribers, included: keeping messages for an absent consumer is the broker's
 * persistent sessions' job); a code from 0x80 on, or no PUBACK in time, is a failed attempt.
 */
export class MqttDestination extends BrokerDestination<MqttClient> {
  /**
   * Each connection's PUBACK reason codes by message id, as the broker sent them: mqtt.js hands an
   * accepted publish's callback the publish packet, not the PUBACK, so 0x10 would read as 0.
   */
  private readonly pubacks = new WeakMap<MqttClient, Map<number, number>>();

  protected connect(lost: () => void): Promise<MqttClient> {
    const url = new URL(this.endpoint.destination.connectUrl);
    const tls = this.endpoint.tls;
    const options: IClientOptions = {
      protocolVersion: 5,
      clientId: `nftw-${this.endpoint.endpointId.slice(0, 8)}-${randomBytes(6).toString('hex')}`,
      clean: true,
      connectTimeout: this.options.timeoutMs,
      // No reconnecting in the background: the next attempt opens a new connection.
      reconnectPeriod: 0,
      ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
      ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
      ...(tls === null
        ? {}
        : { cert: tls.clientCertificate, key: tls.clientKey, ...(tls.caCertificate === null ? {} : { ca: tls.caCertificate }) }),
    };
    // The url without credentials: they go in the options above, never in a text the client may log.
    const client = connect(`${url.protocol}//${url.host}`, options);
    const pubacks = new Map<number, number>();
    this.pubacks.set(client, pubacks);
    // Emitted before mqtt.js settles the publish the PUBACK answers.
    client.on('packetreceive', (packet) => {
      if (packet.cmd === 'puback' && packet.messageId !== undefined) pubacks.set(packet.messageId, packet.reasonCode ?? 0);
    });
    return new Promise<MqttClient>((resolve, reject) => {
      let settled = false;
      client.once('connect', () => {
        settled = true;
        resolve(client);
      });
      client.on('error', (error) => {
        if (!settled) {
          settled = true;
          client.end(true);
          reject(error);
        }
      });
      client.on('close', () => {
        lost();
        if (!settled) {
          settled = true;
          reject(new Error('the broker closed the connection'));
        }
      });
    });
  }

  protected publish(client: MqttClient, message: OutboundMessage): Promise<string> {
    const settings = this.endpoint.destination.settings;
    if (settings.type !== 'mqtt') throw new Error(`a ${settings.type} destination reached the MQTT transport`);
    const topic = expandTemplate('mqtt', settings.topic, message.fields);
    const userProperties = { ...message.headersAt(message.signedAt), 'content-type': 'application/json' };
    return new Promise<string>((resolve, reject) => {
      client.publish(
        topic,
        Buffer.from(message.body, 'utf8'),
        { qos: 1, retain: false, properties: { contentType: 'application/json', userProperties } },
        (error, packet) => {
          const reason: unknown = (error as { code?: unknown } | undefined)?.code;
          if (error && typeof reason === 'number') {
            // mqtt.js reports every code but 0 and 0x10 as an error; below 0x80 a PUBACK accepts.
            if (reason >= FIRST_REFUSAL_CODE) {
              reject(new BrokerRefusal(`the broker refused the message: ${error.message}`, JSON.stringify({ reasonCode: reason })));
            } else {
              resolve(JSON.stringify({ reasonCode: reason }));
            }
          } else if (error) {
            reject(error);
          } else {
            resolve(JSON.stringify({ reasonCode: this.pubackCode(client, packet?.messageId) }));
          }
        },
      );
    });
  }

  /** The reason code of the PUBACK that accepted message `messageId` (0 when none was recorded). */
  private pubackCode(client: MqttClient, messageId: number | undefined): number {
    const codes = this.pubacks.get(client);
    if (codes === undefined || messageId === undefined) return 0;
    const code = codes.get(messageId) ?? 0;
    codes.delete(messageId);
    return code;
  }

  protected async disconnect(client: MqttClient): Promise<void> {
    await client.endAsync(true);
  }
}
