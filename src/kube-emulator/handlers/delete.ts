/** delete of an item and deletecollection, with DeleteOptions from body or query. */
import { successStatus } from '../../kube'
import type { Call } from '../context'
import { groupResource } from '../registry'
import { apiVersionOf, deleteOptions, json, listOptions, present, readBody } from './request'

export async function remove({ ctx, req, url, info, r }: Call): Promise<Response> {
  const { object, gone } = ctx.registry.delete(r, info.namespace, info.name, deleteOptions(url.searchParams, await readBody(req)))
  if (!gone || r.strategy.returnsDeletedObject) return json(present(r, info.version, object))
  return json(successStatus(groupResource(r), info.name, object.metadata.uid ?? ''))
}

export async function removeCollection({ ctx, req, url, info, r }: Call): Promise<Response> {
  const q = url.searchParams
  const deleted = ctx.registry.deleteCollection(r, info.namespace, listOptions(q, r), deleteOptions(q, await readBody(req)))
  return json({
    kind: `${r.strategy.kind}List`,
    apiVersion: apiVersionOf(r, info.version),
    metadata: { resourceVersion: ctx.registry.currentResourceVersion() },
    items: deleted.map((o) => present(r, info.version, o)),
  })
}
