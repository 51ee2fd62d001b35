// Money and prices, exact: amounts are digit strings or BigInt, never JS numbers.
// Wei <-> token units for any `decimals`; decimal price strings shown as percent or cents.

const DIGITS = /^[0-9]+$/;
const PRICE_SCALE = 18;

function pow10(n) {
  return 10n ** BigInt(n);
}

/** Parses what a user typed in token units ("1.5", ".5", "1 000", "2.") into a wei string.
 *  Throws an Error whose message suits the user. */
export function toWei(text, decimals) {
  const s = String(text ?? '').trim().replace(/[\s_,]/g, '');
  if (s === '') throw new Error('Enter an amount.');
  const m = /^([0-9]*)(?:\.([0-9]*))?$/.exec(s);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new Error('Enter a number, like 10 or 2.5.');
  const whole = m[1] || '0';
  const frac = m[2] ?? '';
  if (frac.length > decimals) {
    throw new Error(decimals === 0 ? 'This token has no decimal places.' : `At most ${decimals} decimal places.`);
  }
  const wei = BigInt(whole) * pow10(decimals) + BigInt((frac + '0'.repeat(decimals)).slice(0, decimals) || '0');
  return wei.toString();
}

/** Wei (string or BigInt) as exact token units, trailing zeros trimmed: "1500000000000000000", 18 -> "1.5". */
export function fromWei(wei, decimals) {
  let v = BigInt(wei);
  const neg = v < 0n;
  if (neg) v = -v;
  const base = pow10(decimals);
  const whole = v / base;
  let frac = decimals > 0 ? (v % base).toString().padStart(decimals, '0').replace(/0+$/, '') : '';
  return (neg ? '-' : '') + whole.toString() + (frac ? '.' + frac : '');
}

function group(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Wei as exact token units with thousands separators (a limit or an amount the API names). */
export function formatExactUnits(wei, decimals) {
  const [whole, frac] = fromWei(wei, decimals).split('.');
  return group(whole) + (frac ? '.' + frac : '');
}

/** Wei for display: thousands separators, at most `maxFraction` decimals (fewer if the token
 *  has fewer), rounded half away from zero. Signed values keep their sign; an amount too small
 *  to show is "<0.0001", never 0. */
export function formatUnits(wei, decimals, maxFraction = 4) {
  let v = BigInt(wei);
  const neg = v < 0n;
  if (neg) v = -v;
  const shown = Math.min(maxFraction, decimals);
  const cut = pow10(decimals - shown);
  const t = (v + cut / 2n) / cut;
  const unit = pow10(shown);
  const whole = t / unit;
  const frac = shown > 0 ? (t % unit).toString().padStart(shown, '0').replace(/0+$/, '') : '';
  if (v !== 0n && t === 0n) return (neg ? '-' : '') + '<0.' + '0'.repeat(Math.max(shown - 1, 0)) + '1';
  return (neg ? '-' : '') + group(whole.toString()) + (frac ? '.' + frac : '');
}

/** A signed wei string with an explicit sign for gains: "+1.5", "-0.25", "0". */
export function formatSignedUnits(wei, decimals, maxFraction = 4) {
  const v = BigInt(wei);
  const s = formatUnits(v, decimals, maxFraction);
  return v > 0n ? '+' + s : s;
}

/** Parses a plain decimal string ("0.5", "-0.0123", "1") into a BigInt scaled by 10^scale,
 *  rounding half away from zero past `scale` digits. */
export function parseDecimal(text, scale = PRICE_SCALE) {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?$/.exec(String(text).trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Error(`not a decimal: ${text}`);
  const frac = m[3] ?? '';
  let v = BigInt(m[2] || '0') * pow10(scale) + BigInt((frac + '0'.repeat(scale)).slice(0, scale) || '0');
  if (frac.length > scale && frac[scale] >= '5') v += 1n;
  return m[1] === '-' ? -v : v;
}

/** A scaled BigInt back to a decimal string with exactly `digits` fractional digits, rounded half up. */
function scaledToFixed(v, scale, digits) {
  const neg = v < 0n;
  if (neg) v = -v;
  const drop = scale - digits;
  if (drop > 0) {
    const d = pow10(drop);
    v = (v + d / 2n) / d;
  } else if (drop < 0) {
    v *= pow10(-drop);
  }
  const unit = pow10(digits);
  const whole = (v / unit).toString();
  const frac = digits > 0 ? '.' + (v % unit).toString().padStart(digits, '0') : '';
  const out = whole + frac;
  return neg && /[1-9]/.test(out) ? '-' + out : out;
}

/** A price (0..1 decimal string) as a percent: "0.61803" -> "61.8%". The app's one price
 *  unit: a share paying 1 token costs this percent of a token. */
export function formatPercent(price, digits = 1) {
  return scaledToFixed(parseDecimal(price) * 100n, PRICE_SCALE, digits) + '%';
}


/** A signed ratio ("0.0123") as a signed percent: "+1.23%". */
export function formatSignedPercent(ratio, digits = 2) {
  const v = parseDecimal(ratio) * 100n;
  const s = scaledToFixed(v, PRICE_SCALE, digits);
  return (v > 0n && /[1-9]/.test(s) ? '+' : '') + s + '%';
}

/** Fee percentages (JSON numbers of at most 4 decimals, or their strings) added exactly, as a
 *  decimal string: 0.1 + 0.2 -> "0.3", never 0.30000000000000004. */
export function addPercentages(...values) {
  const sum = values.reduce((acc, v) => acc + parseDecimal(String(v ?? 0), 4), 0n);
  return scaledToFixed(sum, 4, 4).replace(/\.?0+$/, '') || '0';
}

/** Compares two decimal strings: -1, 0 or 1. */
export function compareDecimal(a, b) {
  const x = parseDecimal(a), y = parseDecimal(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** floor(amount x price) in wei, as BigInt (a position's value at a price). */
export function mulPrice(amount, price) {
  return (BigInt(amount) * parseDecimal(price)) / pow10(PRICE_SCALE);
}

/** A price as a JS number for a chart axis: a picture of a price, never money. */
export function priceToNumber(price) {
  return Number(parseDecimal(price, 9)) / 1e9;
}

export function isDigits(s) {
  return typeof s === 'string' && DIGITS.test(s);
}

/** A slippage tolerance in percent ("1", "0.5", at most 2 decimals, 0 to 50) as basis
 *  points (BigInt); throws with a sentence for anything else. */
export function parseTolerance(text) {
  const t = String(text).trim();
  if (!/^[0-9]{1,2}(\.[0-9]{1,2})?$/.test(t)) throw new Error('Enter a slippage tolerance in percent, like 1 or 0.5.');
  const bps = parseDecimal(t, 2);
  if (bps > 5000n) throw new Error('A slippage tolerance may be at most 50%.');
  return bps;
}

/** `amount` (wei or shares, a digit string) less `bps` basis points, rounded up: the least a
 *  trade may give and stay within the tolerance. */
export function lessTolerance(amount, bps) {
  return ((BigInt(amount) * (10000n - bps) + 9999n) / 10000n).toString();
}

/** `amount` plus `bps` basis points, rounded down: the most a trade may take. */
export function plusTolerance(amount, bps) {
  return ((BigInt(amount) * (10000n + bps)) / 10000n).toString();
}

/** A limit price typed in percent ("65", "65.5") as the API takes it ("0.65", "0.655"):
 *  above 0, below 100%, at most 16 decimals (18 once divided by 100); else throws. */
export function parseLimitPrice(text) {
  const t = String(text).trim().replace(/%$/, '').trim();
  if (!/^[0-9]{1,2}(\.[0-9]{1,16})?$/.test(t) || !/[1-9]/.test(t)) throw new Error('Enter a limit price in percent, above 0 and below 100, like 65.');
  const digits = parseDecimal(t, 16).toString().padStart(18, '0');
  return ('0.' + digits).replace(/0+$/, '');
}
