/**
 * Kubernetes resource quantities ("500m", "2", "1.5Gi", "1e3", "128M") parsed exactly as the API
 * server does: decimal and binary suffixes, an optional exponent, and rounding *up* to the unit
 * asked for (CPU in millicores like MilliValue(), memory in bytes like Value()).
 */

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n }
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const QUANTITY = /^\+?(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE]?))$/

/** An exact rational value: numerator / denominator, both positive. */
interface Exact {
  numerator: bigint
  denominator: bigint
}

function exactValue(text: string): Exact | undefined {
  const match = QUANTITY.exec(text)
  if (!match) return undefined
  const [, number = '', exponent, binary, decimal] = match
  const [whole = '', fraction = ''] = number.split('.')
  let numerator = BigInt(whole + fraction || '0')
  let denominator = 10n ** BigInt(fraction.length)
  const power = exponent ? Number(exponent.slice(1)) : (DECIMAL[decimal ?? ''] ?? 0)
  if (Math.abs(power) > 30) return undefined
  if (binary) numerator *= BINARY[binary]!
  if (power > 0) numerator *= 10n ** BigInt(power)
  if (power < 0) denominator *= 10n ** BigInt(-power)
  return { numerator, denominator }
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/** Largest value we keep: beyond it a quantity is a typo, and sums would lose precision. */
const LIMIT = BigInt(Number.MAX_SAFE_INTEGER) / 1024n

/** Millicores of a CPU quantity (rounded up); undefined when it is not a quantity or absurdly large. */
export function parseCpuMillis(value: unknown): number | undefined {
  const exact = typeof value === 'number' ? exactValue(String(value)) : typeof value === 'string' ? exactValue(value.trim()) : undefined
  if (!exact) return undefined
  const millis = ceilDiv(exact.numerator * 1000n, exact.denominator)
  return millis > LIMIT ? undefined : Number(millis)
}

/** Bytes of a memory quantity (rounded up); undefined when it is not a quantity or absurdly large. */
export function parseMemoryBytes(value: unknown): number | undefined {
  const exact = typeof value === 'number' ? exactValue(String(value)) : typeof value === 'string' ? exactValue(value.trim()) : undefined
  if (!exact) return undefined
  const bytes = ceilDiv(exact.numerator, exact.denominator)
  return bytes > LIMIT ? undefined : Number(bytes)
}
