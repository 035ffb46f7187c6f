/**
 * @module http/client-address
 * The client's address, as a key's `allowed_networks` sees it. HTTP requests
 * take Fastify's `request.ip`, which Fastify works out with `trustFunction`
 * (given as its `trustProxy`); a WebSocket upgrade never reaches Fastify, so
 * `clientAddress` works it out by the same rule (that of `proxy-addr`, which
 * Fastify uses) with the same function: the hops are the
 * socket's address, then `X-Forwarded-For` from right to left; starting at
 * the socket, a hop is passed over while it is trusted — every one (`true`),
 * the first N (a number), or those in the listed blocks and names — and the
 * first hop not passed over is the client. Without `trustProxy` the header
 * is ignored: a client could write anything into it.
 */
import ipaddr from 'ipaddr.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { TrustProxy } from '../config/sections/server.js';

/** proxy-addr's names for address ranges. */
const NAMED: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

function ranges(list: readonly string[]): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  return list.flatMap((entry) => NAMED[entry] ?? [entry]).map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : ((address) => [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number])(ipaddr.parse(entry))));
}

function trusted(address: string, blocks: [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(address);
  for (const [base, bits] of blocks) {
    if (ip.kind() === base.kind() && ip.match(base, bits)) return true;
    // An IPv4-mapped IPv6 address (a dual-stack socket's) against an IPv4 block, and the reverse.
    if (ip.kind() === 'ipv6' && base.kind() === 'ipv4' && (ip as ipaddr.IPv6).isIPv4MappedAddress() && (ip as ipaddr.IPv6).toIPv4Address().match(base, bits)) return true;
    if (ip.kind() === 'ipv4' && base.kind() === 'ipv6' && (ip as ipaddr.IPv4).toIPv4MappedAddress().match(base, bits)) return true;
  }
  return false;
}

/** The decision for one hop: `index` counts from the socket's address (0). */
export function trustFunction(trust: TrustProxy): (address: string, index: number) => boolean {
  if (trust === true) return () => true;
  if (trust === false) return () => false;
  if (typeof trust === 'number') return (_address, index) => index < trust;
  const blocks = ranges(trust);
  return (address) => trusted(address, blocks);
}

/** The client's address of a request that reached the socket from `socketAddress` with `headers`. */
export function clientAddress(socketAddress: string | undefined, headers: IncomingHttpHeaders, trust: TrustProxy): string | null {
  if (socketAddress === undefined) return null;
  if (trust === false) return socketAddress;
  const header = headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean)
    .reverse();
  const hops = [socketAddress, ...forwarded];
  const trustHop = trustFunction(trust);
  let index = 0;
  while (index < hops.length - 1 && trustHop(hops[index], index)) index++;
  return hops[index];
}
