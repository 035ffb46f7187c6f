/**
 * @module accounts/pricing
 * Credits and money. One credit per Unicode code point of the transcript as
 * sent, times the model's multiplier; USD = credits × the configured price
 * per million credits. Cost headers are exact: the cost is known before
 * generation and the balance is the one the charge itself returned.
 */

export interface PricingConfig {
  usdPerMillionCredits: number;
  /** Extra prefix under which the cost headers are repeated (e.g. `x-hopper-`). */
  costHeaderAliasPrefix: string | null;
}

export function creditsFor(characters: number, multiplier: number): number {
  return Math.ceil(characters * multiplier);
}

/** USD for a credit amount, as a plain decimal string without float noise. */
export function usd(credits: number, pricing: PricingConfig): string {
  const value = (credits * pricing.usdPerMillionCredits) / 1_000_000;
  return Number(value.toFixed(10)).toString();
}

export function costHeaders(credits: number, balance: number, pricing: PricingConfig): Record<string, string> {
  const headers: Record<string, string> = {
    'request-cost-usd': usd(credits, pricing),
    'request-credits': String(credits),
    'credits-remaining-usd': usd(balance, pricing),
    'credits-remaining': String(balance),
  };
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[`x-${name}`] = value;
    if (pricing.costHeaderAliasPrefix) out[`${pricing.costHeaderAliasPrefix}${name}`] = value;
  }
  return out;
}
