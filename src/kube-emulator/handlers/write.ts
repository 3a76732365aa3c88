/** create (POST to a collection) and update (PUT to an item). */
import { kubeStatus } from '../../kube'
import type { Call } from '../context'
import { groupResource } from '../registry'
import { dryRunQuery, json, present, readObject } from './request'

export async function create({ ctx, req, url, info, r }: Call): Promise<Response> {
  if (info.name) throw kubeStatus.methodNotSupported(groupResource(r), 'create')
  const dryRun = dryRunQuery(url.searchParams)
  const created = ctx.registry.create(r, info.namespace, await readObject(req, r, info.version), { dryRun })
  return json(present(r, info.version, created), 201)
}

export async function update({ ctx, req, url, info, r }: Call): Promise<Response> {
  const dryRun = dryRunQuery(url.searchParams)
  return json(
    present(r, info.version, ctx.registry.update(r, info.namespace, info.name, await readObject(req, r, info.version), { dryRun })),
  )
}
