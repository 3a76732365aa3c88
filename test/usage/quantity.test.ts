import { describe, expect, test } from 'bun:test'
import { parseCpuMillis, parseMemoryBytes } from '../../src/usage/quantity'

describe('Kubernetes quantities', () => {
  for (const [text, millis] of [
    ['2', 2000],
    ['500m', 500],
    ['0.1', 100],
    ['1.5', 1500],
    ['100u', 1],
    ['1e3', 1_000_000],
    ['2k', 2_000_000],
    [' 250m ', 250],
    ['+1', 1000],
    [3, 3000],
  ] as const)
    test(`cpu ${JSON.stringify(text)} → ${millis} millicores (rounded up as MilliValue does)`, () =>
      expect(parseCpuMillis(text)).toBe(millis))

  for (const [text, bytes] of [
    ['1Gi', 1024 ** 3],
    ['512Mi', 512 * 1024 ** 2],
    ['1G', 1e9],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['128974848', 128974848],
    ['129e6', 129e6],
    ['123Mi', 123 * 1024 ** 2],
    ['1m', 1],
  ] as const)
    test(`memory ${JSON.stringify(text)} → ${bytes} bytes`, () => expect(parseMemoryBytes(text)).toBe(bytes))

  for (const text of ['', 'abc', '-1', '1Gb', '1 Gi', '1.2.3', '1e', 'Gi', '1e99', '1Ei0', null, {}])
    test(`${JSON.stringify(text)} → not a quantity`, () => {
      expect(parseCpuMillis(text)).toBeUndefined()
      expect(parseMemoryBytes(text)).toBeUndefined()
    })
})
