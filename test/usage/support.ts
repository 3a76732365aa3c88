import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

export const HOUR = 3_600_000
const MINUTE = 60_000

/** One event as a cluster agent sends it (docs/decisions.md §5a). */
export interface WireEvent {
  time: string
  type: 'created' | 'updated' | 'deleted' | 'heartbeat'
  product: string
  cluster: { uid: string; name: string; mode?: string }
  namespace: { uid: string; name: string }
  object: { group: string; kind: string; name: string; uid: string }
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { cpu?: string; memory?: string } }
}

export interface ObjectSpec {
  uid: string
  product?: string
  cluster: { uid: string; name: string; mode?: string }
  namespace?: string
  kind?: string
}

/** An event of `spec` at `at` (Unix ms) with the given resources. */
export function event(spec: ObjectSpec, at: number, type: WireEvent['type'], resources?: WireEvent['resources']): WireEvent {
  const e: WireEvent = {
    time: new Date(at).toISOString(),
    type,
    product: spec.product ?? 'dbprod',
    cluster: spec.cluster,
    namespace: { uid: `ns-${spec.namespace ?? 'demo'}`, name: spec.namespace ?? 'demo' },
    object: { group: 'kubedb.com', kind: spec.kind ?? 'Postgres', name: `name-${spec.uid}`, uid: spec.uid },
  }
  if (resources) e.resources = resources
  return e
}

export const requests = (cpu: string, memory: string) => ({ requests: { cpu, memory } })

/** Hourly events of `spec` from `from` (inclusive) to `to` (exclusive), `created` first. */
export function hourly(spec: ObjectSpec, from: number, to: number, resources: WireEvent['resources'], step = HOUR): WireEvent[] {
  const events: WireEvent[] = []
  for (let at = from; at < to; at += step) events.push(event(spec, at, at === from ? 'created' : 'heartbeat', resources))
  return events
}

export interface UsageWorld {
  t: TestApp
  owner: TestUser
  admin: TestUser
}

/** An app in billing mode with org `acme` owned by `olga`. */
export async function billingWorld(orgName = 'acme', env: Record<string, string> = {}): Promise<UsageWorld> {
  const t = await makeTestApp({ PLATFORM_MODES: 'billing', ...env })
  const [owner] = await t.users('olga')
  await makeOrg(t, orgName, { owner: owner! })
  return { t, owner: owner!, admin: await t.admin() }
}

/** Posts events as JSON (or NDJSON) and returns the parsed answer. */
export async function send(w: UsageWorld, events: unknown[], opts: { org?: string; ndjson?: boolean; as?: TestUser } = {}) {
  const path = `/api/v1/usage/events?org=${opts.org ?? 'acme'}`
  const who = opts.as ?? w.owner
  const res = opts.ndjson
    ? await w.t.as(who).send('POST', path, events.map((e) => JSON.stringify(e)).join('\n'), { 'content-type': 'application/x-ndjson' })
    : await w.t.as(who).send('POST', path, events)
  return {
    status: res.status,
    body: (await res.json()) as {
      accepted: number
      duplicates: number
      rejected: { index: number; message: string }[]
      rejectedCount: number
    },
  }
}

const cpuCores = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q))
const memGiB = (q: string) => {
  const units: Record<string, number> = { Gi: 1, Mi: 1 / 1024, Ki: 1 / 1024 / 1024 }
  const unit = q.slice(-2)
  return units[unit] !== undefined ? Number(q.slice(0, -2)) * units[unit]! : Number(q) / 1024 ** 3
}

export interface ExpectedMonth {
  cpuMinutes: number
  memMinutes: number
  instances: number
}

/**
 * The oracle: usage per UTC month computed minute by minute, independently of the service. For
 * each minute it asks which event of the object governs it: the latest event at or before the
 * minute, when that event opens a segment (has resources, is not `deleted`) and the minute lies
 * within its reach (the next event when it comes within 2 h, else 1 h; 1 h for the last event,
 * capped at `now`). Events are on whole minutes, so sampling minutes is exact.
 */
export function expectedUsage(events: WireEvent[], product: string, now = Infinity): Map<string, ExpectedMonth> {
  const byObject = new Map<string, WireEvent[]>()
  const rank = { created: 0, updated: 1, heartbeat: 2, deleted: 3 }
  const seen = new Set<string>()
  for (const e of events) {
    if (e.product !== product) continue
    const key = `${e.object.uid}|${e.time}|${e.type}`
    if (seen.has(key)) continue // the first of duplicates counts
    seen.add(key)
    byObject.set(e.object.uid, [...(byObject.get(e.object.uid) ?? []), e])
  }
  const months = new Map<string, ExpectedMonth & { objects: Set<string> }>()
  for (const [uid, list] of byObject) {
    list.sort((a, b) => Date.parse(a.time) - Date.parse(b.time) || rank[a.type] - rank[b.type])
    const times = list.map((e) => Date.parse(e.time))
    const first = times[0]!
    const last = Math.min(times[times.length - 1]! + HOUR, now)
    let i = -1
    for (let minute = first; minute < last; minute += MINUTE) {
      while (i + 1 < list.length && times[i + 1]! <= minute) i++
      // At an instant with several events the last in order governs (a deleted closes).
      const e = list[i]!
      if (e.type === 'deleted' || !e.resources) continue
      const next = times[i + 1]
      const reach = next === undefined ? Math.min(times[i]! + HOUR, now) : next - times[i]! <= 2 * HOUR ? next : times[i]! + HOUR
      if (minute >= reach) continue
      const cpu = e.resources.requests?.cpu ?? e.resources.limits!.cpu!
      const mem = e.resources.requests?.memory ?? e.resources.limits!.memory!
      const month = new Date(minute).toISOString().slice(0, 7)
      let m = months.get(month)
      if (!m) months.set(month, (m = { cpuMinutes: 0, memMinutes: 0, instances: 0, objects: new Set() }))
      m.cpuMinutes += cpuCores(cpu)
      m.memMinutes += memGiB(mem)
      m.objects.add(uid)
    }
  }
  return new Map([...months].map(([k, m]) => [k, { cpuMinutes: m.cpuMinutes, memMinutes: m.memMinutes, instances: m.objects.size }]))
}

/** Two-decimal core-months as the spec rounds them. */
export const coreMonths = (minutes: number) => Math.round((minutes / 43_800) * 100) / 100
