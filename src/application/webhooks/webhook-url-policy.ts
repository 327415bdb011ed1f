import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../../domain/domain-error.js';

export interface UrlPolicySettings {
  WEBHOOKS_ALLOW_HTTP: boolean;
  WEBHOOKS_ALLOW_PRIVATE: boolean;
}

/** Resolves a host name to its addresses (injectable for tests of the policy). */
export type Resolve = (host: string) => Promise<string[]>;

const systemResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** Only public unicast addresses: loopback, private, link-local, unspecified and every special range are refused. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  // IPv4-compatible IPv6 (`::a.b.c.d`, deprecated): ipaddr.js calls it unicast, whatever IPv4 address it carries.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === 'unicast';
}

/**
 * SPEC §12: `https` (or `http` with WEBHOOKS_ALLOW_HTTP=true) to a host that neither is nor
 * resolves to a loopback, private, link-local or unspecified address (unless
 * WEBHOOKS_ALLOW_PRIVATE=true). Checked when an endpoint is configured and before each delivery
 * or ping. `source` is where a refusal points: the body's `/url` when the request sent the URL,
 * null when it is the stored one (a ping).
 */
export async function checkWebhookUrl(
  url: string,
  settings: UrlPolicySettings,
  { source = '/url', resolve = systemResolve }: { source?: string | null; resolve?: Resolve } = {},
): Promise<void> {
  const refused = (message: string) => new DomainError('WEBHOOK.URL_NOT_ALLOWED', message, source);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refused('The webhook URL is not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && settings.WEBHOOKS_ALLOW_HTTP)) {
    throw refused(settings.WEBHOOKS_ALLOW_HTTP ? 'A webhook URL must use http or https' : 'A webhook URL must use https (http needs WEBHOOKS_ALLOW_HTTP=true)');
  }
  if (parsed.username !== '' || parsed.password !== '') throw refused('A webhook URL may not carry credentials');
  if (settings.WEBHOOKS_ALLOW_PRIVATE) return;
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw refused(`The webhook host ${host} does not resolve`);
    }
  }
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (addresses.length === 0 || blocked !== undefined) {
    throw refused(
      `The webhook host ${host} is or resolves to a non-public address${blocked ? ` (${blocked})` : ''}; set WEBHOOKS_ALLOW_PRIVATE=true for receivers on a private network`,
    );
  }
}

/**
 * The DNS lookup of a delivery's own connection when WEBHOOKS_ALLOW_PRIVATE is off: the
 * addresses it connects to are checked, so a host cannot pass `checkWebhookUrl` with a public
 * address and then answer the connection's own lookup with a private one (DNS rebinding).
 * Undefined (the system's lookup) when private receivers are allowed.
 */
export function deliveryLookup(settings: UrlPolicySettings): LookupFunction | undefined {
  return settings.WEBHOOKS_ALLOW_PRIVATE ? undefined : publicOnlyLookup;
}

const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
    if (addresses.length === 0 || blocked !== undefined) {
      const refusal = Object.assign(new Error(`${hostname} resolves to a non-public address${blocked ? ` (${blocked.address})` : ''}`), {
        code: 'WEBHOOK.URL_NOT_ALLOWED',
      });
      return callback(refusal, '', 0);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};
