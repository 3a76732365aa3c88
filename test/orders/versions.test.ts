import { describe, expect, test } from 'bun:test'
import { pickVersion } from '../../src/orders/charts/versions'

/** Helm's version choice (reference §4.1), as a table. */

const AVAILABLE = ['2.0.0-rc.1', '1.10.0', '1.2.10', '1.2.3', 'v1.1.0', '0.9.0', '1.0.0+build.5']

describe('pickVersion', () => {
  test.each([
    [undefined, '1.10.0', 'empty: the latest stable version, prereleases excluded'],
    ['', '1.10.0', 'empty string: the same'],
    ['1.2.3', '1.2.3', 'an exact match'],
    ['v1.1.0', 'v1.1.0', 'an exact match with the v prefix as listed'],
    ['1.1.0', 'v1.1.0', 'a version matching a v-prefixed entry'],
    ['~1.2', '1.2.10', 'a tilde range: the highest 1.2.x'],
    ['^1.0', '1.10.0', 'a caret range: the highest 1.x'],
    ['1.2', '1.2.10', 'a partial version: the highest 1.2.x'],
    ['>=1.0 <1.5', '1.2.10', 'a compound range'],
    ['2.0.0-rc.1', '2.0.0-rc.1', 'a prerelease named exactly'],
    ['>=2.0.0-0', '2.0.0-rc.1', 'a range that admits prereleases'],
    ['1.0.0+build.5', '1.0.0+build.5', 'build metadata kept'],
    ['3.x', undefined, 'nothing matches'],
    ['not a version', undefined, 'not a range at all'],
  ])('%p → %p (%s)', (wanted, expected) => {
    expect(pickVersion(AVAILABLE, wanted)).toBe(expected)
  })
})
