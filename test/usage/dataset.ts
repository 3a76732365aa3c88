import { event, HOUR, hourly, type ObjectSpec, requests, type WireEvent } from './support'

const PROD = { uid: 'cluster-prod', name: 'prod-eu', mode: 'prod' }
const STAGING = { uid: 'cluster-staging', name: 'staging', mode: 'staging' }
const PLAIN = { uid: 'cluster-plain', name: 'lab' }

const at = (iso: string) => Date.parse(iso)

/**
 * A synthetic data set over September–November 2025: three clusters (prod, staging, no mode), a
 * resize, a 5 h silence, a delete, limits-only resources, 90-minute reporting, an object crossing
 * two month boundaries and one crossing midnight at a month end, plus a backup object.
 */
export function syntheticEvents(): WireEvent[] {
  const pg: ObjectSpec = { uid: 'pg-a', cluster: PROD }
  const mysql: ObjectSpec = { uid: 'my-b', cluster: STAGING, kind: 'MySQL', namespace: 'shop' }
  const redis: ObjectSpec = { uid: 'redis-c', cluster: PLAIN, kind: 'Redis' }
  const edge: ObjectSpec = { uid: 'pg-edge', cluster: STAGING }
  const backup: ObjectSpec = { uid: 'bk-1', cluster: PROD, product: 'backupprod', kind: 'BackupConfiguration' }
  return [
    // Across two month boundaries, resized from 2 to 4 cores on Oct 10 12:00.
    ...hourly(pg, at('2025-09-15T00:00:00Z'), at('2025-10-10T12:00:00Z'), requests('2', '4Gi')),
    event(pg, at('2025-10-10T12:00:00Z'), 'updated', requests('4', '8Gi')),
    ...hourly(pg, at('2025-10-10T13:00:00Z'), at('2025-11-10T00:00:00Z'), requests('4', '8Gi')).map((e) => ({
      ...e,
      type: 'heartbeat' as const,
    })),
    // A 5 h silence on Oct 5 (counts 1 h after the last event), then deleted at 12:30 on Oct 20.
    ...hourly(mysql, at('2025-10-01T00:00:00Z'), at('2025-10-05T03:00:00Z'), requests('1500m', '3Gi')),
    ...hourly(mysql, at('2025-10-05T08:00:00Z'), at('2025-10-20T12:00:00Z'), requests('1500m', '3Gi')).map((e) => ({
      ...e,
      type: 'heartbeat' as const,
    })),
    event(mysql, at('2025-10-20T12:30:00Z'), 'deleted'),
    // Every 90 minutes (bridged), limits only.
    ...hourly(redis, at('2025-10-01T00:00:00Z'), at('2025-11-01T00:00:00Z'), { limits: { cpu: '500m', memory: '512Mi' } }, 1.5 * HOUR),
    // Its last event 30 min before the end of October: its hour runs into November.
    event(edge, at('2025-10-31T20:30:00Z'), 'created', requests('1', '1Gi')),
    event(edge, at('2025-10-31T21:30:00Z'), 'heartbeat', requests('1', '1Gi')),
    event(edge, at('2025-10-31T22:30:00Z'), 'heartbeat', requests('1', '1Gi')),
    event(edge, at('2025-10-31T23:30:00Z'), 'heartbeat', requests('1', '1Gi')),
    // Another product.
    ...hourly(backup, at('2025-10-01T00:00:00Z'), at('2025-10-08T00:00:00Z'), requests('250m', '256Mi')),
  ]
}

/** A deterministic shuffle, so batches arrive out of order (late events). */
export function shuffled<T>(items: T[], seed = 7): T[] {
  const out = [...items]
  let state = seed
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648
    const j = state % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** Splits into batches of `size`. */
export const batches = <T>(items: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))
