import { rfc3339 } from '../clock'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { findOrgById, findOrgByName } from '../orgs/store'
import type { Product } from './events'
import { recountObjects } from './ingest'
import * as store from './store'

/** Contracts of docs/decisions.md §5a: paid minutes of an org's product are billable. Site admins manage them. */

const ContractMessages = {
  orgNotFound: 'org names no organization',
  badTime: (field: string) => `${field} must be an RFC 3339 date-time`,
  endBeforeStart: 'end must be after start',
  notFound: 'contract does not exist',
} as const

export interface ContractBody {
  org: string
  product: Product
  kind: 'paid' | 'free'
  start: string
  end?: string
  clusterUIDs?: string[]
}

export interface Contract extends ContractBody {
  id: number
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/i

function timeOf(text: string, field: string): number {
  const ms = RFC3339.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(ms))
    throw new AppError('invalid', ContractMessages.badTime(field), [{ field, message: ContractMessages.badTime(field) }])
  return ms
}

function wire(row: store.ContractRow, org: string): Contract {
  const contract: Contract = {
    id: row.id,
    org,
    product: row.product as Product,
    kind: row.kind,
    start: rfc3339(row.startAt),
  }
  if (row.endAt !== null) contract.end = rfc3339(row.endAt)
  if (row.clusterUids !== null) contract.clusterUIDs = row.clusterUids
  return contract
}

/**
 * Records a contract and recounts the org's billable minutes of that product in the same
 * transaction, so no read sees the old numbers afterwards. Throws invalid.
 */
export async function createContract(deps: Deps, body: ContractBody): Promise<Contract> {
  const org = await findOrgByName(deps.db.read, body.org)
  if (!org) throw new AppError('invalid', ContractMessages.orgNotFound, [{ field: 'org', message: ContractMessages.orgNotFound }])
  const startAt = timeOf(body.start, 'start')
  const endAt = body.end === undefined ? null : timeOf(body.end, 'end')
  if (endAt !== null && endAt <= startAt)
    throw new AppError('invalid', ContractMessages.endBeforeStart, [{ field: 'end', message: ContractMessages.endBeforeStart }])
  const row = await deps.db.write(async (tx) => {
    const inserted = await store.insertContract(tx, {
      orgId: org.id,
      product: body.product,
      kind: body.kind,
      startAt,
      endAt,
      clusterUids: body.clusterUIDs ?? null,
    })
    await recountObjects(tx, org.id, body.product)
    return inserted
  })
  return wire(row, org.name)
}

/** Every contract, or the org's (unknown org: none). */
export async function listContracts(deps: Deps, orgName: string | undefined): Promise<Contract[]> {
  const org = orgName === undefined ? undefined : await findOrgByName(deps.db.read, orgName)
  if (orgName !== undefined && !org) return []
  const rows = await store.listContracts(deps.db.read, org?.id)
  const names = new Map<number, string>()
  for (const r of rows) if (!names.has(r.orgId)) names.set(r.orgId, (await findOrgById(deps.db.read, r.orgId))?.name ?? '')
  return rows.map((r) => wire(r, names.get(r.orgId)!))
}

/** Removes a contract and recounts what it covered. Throws notFound. */
export async function deleteContract(deps: Deps, id: number): Promise<void> {
  await deps.db.write(async (tx) => {
    const row = await store.findContract(tx, id)
    if (!row) throw new AppError('notFound', ContractMessages.notFound)
    await store.deleteContract(tx, id)
    await recountObjects(tx, row.orgId, row.product)
  })
}
