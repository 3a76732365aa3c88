import semver from 'semver'

/**
 * Helm's version choice (reference §4.1): an exact string match wins; an empty version means the
 * latest stable release (prereleases excluded); anything else is a semver constraint such as
 * `~1.2` or `>=1.0 <2`, answered with the highest version that satisfies it. A leading `v` and
 * partial versions are accepted, as Masterminds semver does.
 */
export function pickVersion(available: readonly string[], wanted: string | undefined): string | undefined {
  const asked = (wanted ?? '').trim()
  if (asked !== '' && available.includes(asked)) return asked
  const range = asked === '' ? '*' : semver.validRange(asked, { loose: true })
  if (range === null) return undefined
  const usable = available.filter((v) => semver.valid(v, { loose: true }) !== null)
  const best = semver.maxSatisfying(usable, range, { loose: true })
  return best ?? undefined
}

/** True when `text` is a plain version (`1.2.3`, `v1.2.3-rc.1`), not a range. */
export function isExactVersion(text: string): boolean {
  return semver.valid(text, { loose: true }) !== null
}
