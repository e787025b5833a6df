import { parseHostPortList } from '../../config/egress-config';
import { checkDestinationHost } from './destination-policy';
import { WebhookHostError } from './url-policy';

const resolvesTo = (address: string) => () => Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);

describe('broker address policy', () => {
  const strict = { allowPrivateNetworks: false, allowedHosts: ['rabbit.internal:5672', '127.0.0.1:4222'] };

  it('lets any host through where private networks are allowed', async () => {
    await expect(checkDestinationHost('127.0.0.1', '127.0.0.1:5672', { allowPrivateNetworks: true, allowedHosts: [] })).resolves.toEqual([
      '127.0.0.1',
    ]);
  });

  it('refuses private and loopback hosts unless their host:port is listed', async () => {
    await expect(checkDestinationHost('127.0.0.1', '127.0.0.1:5672', strict)).rejects.toBeInstanceOf(WebhookHostError);
    await expect(checkDestinationHost('127.0.0.1', '127.0.0.1:4222', strict)).resolves.toEqual(['127.0.0.1']);
    await expect(checkDestinationHost('rabbit.internal', 'rabbit.internal:5672', strict, resolvesTo('10.1.2.3'))).resolves.toEqual([
      '10.1.2.3',
    ]);
    // Listed for another port only: refused, judged on the address the name resolves to.
    await expect(checkDestinationHost('rabbit.internal', 'rabbit.internal:5671', strict, resolvesTo('10.1.2.3'))).rejects.toBeInstanceOf(
      WebhookHostError,
    );
    await expect(checkDestinationHost('broker.example', 'broker.example:5672', strict, resolvesTo('93.184.216.34'))).resolves.toEqual([
      '93.184.216.34',
    ]);
    await expect(checkDestinationHost('sneaky.example', 'sneaky.example:5672', strict, resolvesTo('169.254.169.254'))).rejects.toThrow(
      /private, loopback, link-local/,
    );
  });

  it('reads DESTINATION_ALLOWED_HOSTS entries, refusing malformed ones', () => {
    expect(parseHostPortList('Rabbit.Internal:5672, 10.0.0.7:4222,[fd00::1]:1883')).toEqual([
      'rabbit.internal:5672',
      '10.0.0.7:4222',
      '[fd00::1]:1883',
    ]);
    for (const bad of ['rabbit.internal', 'rabbit:0', 'rabbit:70000', 'amqp://rabbit:5672', 'a b:1', ':5672', 'x:5672,']) {
      expect(parseHostPortList(bad)).toBeNull();
    }
  });
});
