/**
 * Budget currencies. Costs are recorded in USD (the providers' unit); a
 * budget in another currency is compared through a configured rate.
 */

/** Units of a currency per 1 USD, by ISO 4217 code; USD is always present. */
export type CurrencyRates = Readonly<Record<string, number>>;

const CURRENCY = /^[A-Z]{3}$/;

/**
 * Parses `EUR=0.92,GBP=0.79` (whitespace ignored; empty means none) into
 * rates with USD = 1. Returns undefined for anything malformed: a bad code,
 * a non-positive or non-finite rate, a repeated code, or a USD rate other than 1.
 */
export function parseCurrencyRates(text: string | undefined): CurrencyRates | undefined {
  const rates: Record<string, number> = { USD: 1 };
  const seen = new Set<string>();
  for (const item of (text ?? '').split(',')) {
    const trimmed = item.trim();
    if (trimmed === '') continue;
    const [code, value, extra] = trimmed.split('=').map((part) => part.trim());
    if (code === undefined || value === undefined || extra !== undefined || !CURRENCY.test(code)) return undefined;
    const rate = Number(value);
    if (value === '' || !Number.isFinite(rate) || rate <= 0 || seen.has(code)) return undefined;
    if (code === 'USD' && rate !== 1) return undefined;
    seen.add(code);
    rates[code] = rate;
  }
  return Object.freeze(rates);
}

/** `usd` expressed in `currency`, or undefined when no rate is configured for it. */
export function fromUsd(usd: number, currency: string, rates: CurrencyRates): number | undefined {
  const rate = rates[currency];
  return rate === undefined ? undefined : usd * rate;
}
