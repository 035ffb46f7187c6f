/**
 * @module webhooks/url-guard
 * The SSRF guard of webhook URLs. A job's `webhook_url` is a request this
 * server makes on a client's behalf from inside its own network, so the URL
 * must be absolute, `https:` (or `http:` when allowed), carry no credentials
 * and name a host whose every address is public unicast — unless
 * `allowPrivateNetworks` says internal receivers are fine. The same address
 * rules run again at delivery time (`deliver.ts`), on the address actually
 * connected to, because a name can resolve elsewhere by then (DNS rebinding).
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ApiError } from '../errors/api-error.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a host name resolves to (`dns.promises.lookup` with `all: true` by default). */
export type WebhookLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: WebhookLookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface WebhookUrlOptions {
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
  lookup?: WebhookLookup;
}

function refuse(reason: string): ApiError {
  return new ApiError('invalid_webhook_url', { reason });
}

/** The host as an address when it is an IP literal (brackets of IPv6 removed), else null. */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : null;
}

/**
 * The URL's shape alone: absolute, scheme, credentials, length. Shared with
 * delivery, which re-checks a stored URL before using it (config may have
 * changed since it was accepted).
 */
export function parseWebhookUrl(url: string, allowHttp: boolean): URL {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) throw refuse(`it is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse('it is not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && !(allowHttp && parsed.protocol === 'http:')) {
    throw refuse(allowHttp ? 'it must use https or http' : 'it must use https');
  }
  if (parsed.username || parsed.password) throw refuse('it must not carry a username or password');
  if (!parsed.hostname) throw refuse('it has no host');
  return parsed;
}

/**
 * Why `address` may not receive webhooks, or null when it is public unicast.
 * IPv4-mapped IPv6 is judged as the IPv4 it carries, and so is NAT64's
 * well-known prefix (64:ff9b::/96), so neither hides an internal address; every
 * other special range (6to4, Teredo, local-use NAT64, documentation …) is refused.
 */
export function addressProblem(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return `resolves to an address that cannot be read (${address})`;
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
    else if (v6.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) {
      const bytes = v6.toByteArray().slice(12);
      ip = ipaddr.fromByteArray(bytes);
    }
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  return `resolves to a ${RANGE_NAMES[range] ?? `reserved (${range})`} address (${address})`;
}

const RANGE_NAMES: Record<string, string> = {
  private: 'private',
  loopback: 'loopback',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
};

/** Resolves the host (or takes its literal address) and refuses any address that is not public, unless allowed. */
export async function checkWebhookHost(url: URL, options: WebhookUrlOptions): Promise<ResolvedAddress[]> {
  const literal = literalAddress(url);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: literal, family: isIP(literal) }];
  else {
    try {
      addresses = await (options.lookup ?? systemLookup)(url.hostname);
    } catch {
      throw refuse(`its host ${url.hostname} does not resolve`);
    }
    if (addresses.length === 0) throw refuse(`its host ${url.hostname} does not resolve`);
  }
  if (!options.allowPrivateNetworks) {
    // Every address, not only the first: a client connecting to any of them could reach an internal one.
    for (const { address } of addresses) {
      const problem = addressProblem(address);
      if (problem) throw refuse(problem);
    }
  }
  return addresses;
}

/** Checks a webhook URL as a job is submitted; throws `invalid_webhook_url` with the reason. */
export async function checkWebhookUrl(url: string, options: WebhookUrlOptions): Promise<URL> {
  const parsed = parseWebhookUrl(url, options.allowHttp);
  await checkWebhookHost(parsed, options);
  return parsed;
}
