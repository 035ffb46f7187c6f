/**
 * @module accounts/networks
 * A key's `allowed_networks`: CIDR blocks (IPv4 and IPv6, read by
 * `ipaddr.js`) the caller's address must fall in. An IPv4 address seen as
 * IPv4-mapped IPv6 (`::ffff:10.0.0.1`, as a dual-stack socket reports it)
 * counts as the IPv4 address; an IPv6 block holds IPv4 addresses only through
 * their mapped form.
 */
import ipaddr from 'ipaddr.js';

/** The block as written, normalised (`10.0.0.0/8`, `2001:db8::/32`); null when it is not a CIDR block. A bare address is a block of one. */
export function normaliseCidr(text: string): string | null {
  const trimmed = text.trim();
  try {
    if (!trimmed.includes('/')) {
      const address = ipaddr.parse(trimmed);
      return `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
    }
    const [address, bits] = ipaddr.parseCIDR(trimmed);
    return `${address.toString()}/${bits}`;
  } catch {
    return null;
  }
}

/** Whether `address` (as a socket or proxy reports it) is inside one of `cidrs`; false for an address that is not one. */
export function inNetworks(address: string | null | undefined, cidrs: readonly string[]): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  for (const cidr of cidrs) {
    let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
    try {
      range = ipaddr.parseCIDR(cidr);
    } catch {
      continue;
    }
    const [base, bits] = range;
    if (ip.kind() === base.kind()) {
      if (ip.match(range)) return true;
    } else if (ip.kind() === 'ipv4' && base.kind() === 'ipv6') {
      if ((ip as ipaddr.IPv4).toIPv4MappedAddress().match(base, bits)) return true;
    }
  }
  return false;
}
