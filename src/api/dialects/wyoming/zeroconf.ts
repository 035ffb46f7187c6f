/**
 * @module api/wyoming/zeroconf
 * Advertises the Wyoming listener over mDNS as `<name>._wyoming._tcp.local.`
 * (what Home Assistant's `wyoming` integration browses for), with the port
 * and no TXT properties, as the protocol's reference library registers it.
 * bonjour-service (multicast-dns underneath) answers queries and announces;
 * it is loaded only when `wyoming.zeroconf` is on, so no multicast socket is
 * opened otherwise.
 */
import { hostname } from 'node:os';
import type { Logger } from '../../../log/logger.js';

export interface Advertisement {
  /** The instance name advertised (`<name>._wyoming._tcp.local.`). */
  readonly name: string;
  /** Says goodbye (TTL 0) and closes the multicast socket. */
  close(): Promise<void>;
}

/** The default instance name: the product and this host, so two gateways on one network differ. */
export function defaultZeroconfName(): string {
  return `voicegate-${hostname()}`.replace(/\./g, '-');
}

export async function advertise(options: { name: string | null; port: number; logger: Logger }): Promise<Advertisement> {
  const { Bonjour } = await import('bonjour-service');
  const name = options.name ?? defaultZeroconfName();
  const bonjour = new Bonjour({}, (err: unknown) => options.logger.warn({ err }, 'zeroconf: mDNS error'));
  const service = bonjour.publish({ name, type: 'wyoming', protocol: 'tcp', port: options.port, disableIPv6: false });
  service.on('error', (err: unknown) => options.logger.warn({ err, name }, 'zeroconf: the service could not be advertised'));
  options.logger.info({ name: `${name}._wyoming._tcp.local.`, port: options.port }, 'wyoming advertised over zeroconf');
  return {
    name,
    close: () =>
      new Promise<void>((resolve) => {
        bonjour.unpublishAll(() => bonjour.destroy(() => resolve()));
      }),
  };
}
