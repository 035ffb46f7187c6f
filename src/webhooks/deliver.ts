/**
 * @module webhooks/deliver
 * One delivery attempt: a POST of the signed body to the webhook URL. It is
 * SSRF-safe against DNS rebinding: the socket connects only to an address
 * checked at this moment, because the request's own `lookup` resolves the
 * host, refuses any address the URL guard would refuse and hands back exactly
 * the addresses it checked (TLS SNI and Host still name the host). Redirects
 * are not followed (a redirect could point anywhere). One timeout covers the
 * lookup, the connect and the response; at most a few KB of the answer are read.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { ApiError } from '../errors/api-error.js';
import { addressProblem, checkWebhookHost, literalAddress, parseWebhookUrl, systemLookup, type WebhookLookup } from './url-guard.js';

export const USER_AGENT = 'Voicegate-Webhooks/1';
/** Of the receiver's answer only this much is read; the rest is cut off with the connection. */
export const MAX_RESPONSE_BYTES = 4096;

export interface DeliveryOptions {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  allowHttp: boolean;
  lookup?: WebhookLookup;
  /** Aborts the attempt (shutdown); it then ends with `ok: false`. */
  signal?: AbortSignal;
}

export interface DeliveryResult {
  ok: boolean;
  status?: number;
  error?: string;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for `http.request` that hands the socket only addresses the guard passed. */
function guardedLookup(options: DeliveryOptions) {
  const resolve = options.lookup ?? systemLookup;
  return (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw new ApiError('invalid_webhook_url', { reason: `its host ${hostname} does not resolve` });
        if (!options.allowPrivateNetworks) {
          for (const { address } of addresses) {
            const problem = addressProblem(address);
            if (problem) throw new ApiError('invalid_webhook_url', { reason: problem });
          }
        }
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((a) => a.family === lookupOptions.family) : addresses;
        if (wanted.length === 0) throw new ApiError('invalid_webhook_url', { reason: `its host ${hostname} has no IPv${lookupOptions.family} address` });
        // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
        if (lookupOptions.all) callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, wanted[0].address, wanted[0].family);
      })
      .catch((err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), ''));
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** POSTs `body` with `headers` (the signature) to `url`; never throws. */
export async function deliverWebhook(url: string, body: string, headers: Record<string, string>, options: DeliveryOptions): Promise<DeliveryResult> {
  let target: URL;
  try {
    target = parseWebhookUrl(url, options.allowHttp);
    // A literal address never goes through `lookup`, so it is checked here.
    if (literalAddress(target)) await checkWebhookHost(target, options);
  } catch (err) {
    return { ok: false, error: describe(err) };
  }
  if (options.signal?.aborted) return { ok: false, error: 'aborted' };

  const payload = Buffer.from(body, 'utf8');
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (result: DeliveryResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const req = transport.request(target, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'content-length': String(payload.length),
      },
      lookup: guardedLookup(options) as unknown as typeof import('node:dns').lookup,
      // A fresh connection per attempt: no pooled socket outlives the check of its address.
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no response within ${options.timeoutMs} ms`)), options.timeoutMs);
    timer.unref();
    const onAbort = (): void => {
      req.destroy(new Error('aborted'));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    // Once the status is in, it is the outcome, however reading the rest of the answer ends.
    let answered: DeliveryResult | null = null;
    req.on('error', (err) => finish(answered ?? { ok: false, error: describe(err) }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const result: DeliveryResult = (answered = ok
        ? { ok, status }
        : { ok, status, error: status >= 300 && status < 400 ? `the receiver answered ${status} (redirects are not followed)` : `the receiver answered ${status}` });
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) {
          // Enough: the status is what counts, and a receiver must not make us read forever.
          finish(result);
          req.destroy();
        }
      });
      res.on('end', () => finish(result));
      res.on('error', () => finish(result));
      res.on('close', () => finish(result));
    });
    req.end(payload);
  });
}
