import { Elysia, t } from 'elysia'
import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { jsonAnswer } from '../http/json-answer'
import { answerPage } from '../http/pagination'
import { ErrorBody } from '../http/schemas'
import { ordersRuntime } from './runtime'
import { ChartTemplateOutput, Order, OrderFileParams, OrderInput, OrderListQuery, OrderParams, ResourcesQuery, ScriptRef } from './schemas'
import * as orders from './service'
import { ChartSource, ChartSourceParams, ChartSourceSpec, ChartSourceUpdate } from './sources/schemas'
import * as sources from './sources/service'

const TAGS = ['orders']
const SOURCE_TAGS = ['chart sources']
const errors = { 401: ErrorBody, 403: ErrorBody }
const renderErrors = { ...errors, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody }

const text = (body: string, contentType: string) => new Response(body, { headers: { 'content-type': contentType } })
const json = (body: unknown) => jsonAnswer(JSON.stringify(body))
/** Scripts are text/x-shellscript, or the original's [{os, url, command, script}] list when JSON is asked for (docs/decisions.md §4). */
const wantsJson = (accept: string | undefined) => /application\/json/i.test(accept ?? '')
const ScriptAnswer = t.Union([t.String({ description: 'The script (text/x-shellscript)' }), t.Array(ScriptRef)])

/** Chart sources (site admins) and the caller's deployment orders with their renders and install scripts (docs/decisions.md §4, §4a). */
export const orderRoutes = (deps: Deps) => {
  const rt = ordersRuntime(deps)
  /** The handler of one script route: the script made by `make`, as text or as its JSON list. */
  const scriptOf =
    (kind: 'helm3' | 'yaml', make: typeof orders.helm3) =>
    async ({ me, params, headers }: { me: Actor; params: { id: string }; headers: Record<string, string | undefined> }) => {
      const script = await make(rt, me, params.id)
      return wantsJson(headers.accept)
        ? json(orders.scriptRefs(rt, params.id, kind, script))
        : text(script, 'text/x-shellscript; charset=utf-8')
    }
  return new Elysia({ name: 'orders.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get(
      '/admin/chart-sources',
      async () => {
        await rt.seeded
        return sources.listSources(deps)
      },
      {
        signedIn: 'admin:chart-source',
        scope: 'admin',
        response: { 200: t.Array(ChartSource), ...errors },
        detail: { summary: 'List chart sources (passwords answered as "")', tags: SOURCE_TAGS },
      },
    )
    .post(
      '/admin/chart-sources',
      async ({ body, status }) => {
        await rt.seeded
        return status(201, await sources.createSource(deps, body))
      },
      {
        signedIn: 'admin:chart-source',
        scope: 'admin',
        body: ChartSourceSpec,
        response: { 201: ChartSource, ...errors, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary: 'Add a chart source (Helm HTTP repository or OCI registry); private addresses need PLATFORM_ALLOW_PRIVATE_REGISTRIES',
          tags: SOURCE_TAGS,
        },
      },
    )
    .get(
      '/admin/chart-sources/:name',
      async ({ params }) => {
        await rt.seeded
        return sources.getSource(deps, params.name)
      },
      {
        signedIn: 'admin:chart-source',
        scope: 'admin',
        params: ChartSourceParams,
        response: { 200: ChartSource, ...errors, 404: ErrorBody },
        detail: { summary: 'One chart source (password answered as "")', tags: SOURCE_TAGS },
      },
    )
    .put(
      '/admin/chart-sources/:name',
      async ({ params, body }) => {
        await rt.seeded
        return sources.replaceSource(deps, params.name, body)
      },
      {
        signedIn: 'admin:chart-source',
        scope: 'admin',
        params: ChartSourceParams,
        body: ChartSourceUpdate,
        response: { 200: ChartSource, ...errors, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: "Replace a chart source's settings; an empty or absent password keeps the stored one", tags: SOURCE_TAGS },
      },
    )
    .delete(
      '/admin/chart-sources/:name',
      async ({ params, status }) => {
        await rt.seeded
        await sources.deleteSource(deps, params.name)
        return status(204, undefined)
      },
      {
        signedIn: 'admin:chart-source',
        scope: 'admin',
        params: ChartSourceParams,
        response: { 204: t.Void(), ...errors, 404: ErrorBody },
        detail: { summary: 'Delete a chart source (orders that used it keep their cached charts)', tags: SOURCE_TAGS },
      },
    )
    .post(
      '/user/deploy/orders',
      async ({ me, body }) => {
        await rt.seeded
        return orders.createOrder(rt, me, body)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: OrderInput,
        response: { 200: Order, 400: ErrorBody, ...errors, 422: ErrorBody, 502: ErrorBody },
        detail: {
          summary:
            'Create a deployment order: each chart is resolved, fetched and verified now (400 without packages, 422 unknown chart or version, 502 registry failure)',
          tags: TAGS,
        },
      },
    )
    .get(
      '/user/deploy/orders',
      ({ me, query, set, request }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) => orders.listOrders(rt, me, page)),
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: OrderListQuery,
        response: { 200: t.Array(Order), ...errors },
        detail: { summary: "The caller's orders, newest first (paginated, X-Total-Count)", tags: TAGS },
      },
    )
    .get('/user/deploy/orders/:id', ({ me, params }) => orders.getOrder(rt, me, params.id), {
      signedIn: 'signed-in',
      scope: 'user',
      params: OrderParams,
      response: { 200: Order, ...errors, 404: ErrorBody },
      detail: { summary: "One of the caller's orders (another user's is 404)", tags: TAGS },
    })
    .delete(
      '/user/deploy/orders/:id',
      async ({ me, params, status }) => {
        await orders.deleteOrder(rt, me, params.id)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: OrderParams,
        response: { 204: t.Void(), ...errors, 404: ErrorBody },
        detail: { summary: "Delete one of the caller's orders", tags: TAGS },
      },
    )
    .get(
      '/user/deploy/orders/:id/render/manifest',
      async ({ me, params }) => text(await orders.renderManifest(rt, me, params.id), 'text/plain; charset=utf-8'),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: OrderParams,
        response: {
          200: t.String({
            description:
              'Plain text: per package a `# Source: <source> - <chart>@<version>` header, then its pre-install hooks, manifests and post-install hooks as `helm template` prints them',
          }),
          ...renderErrors,
        },
        detail: { summary: 'The order rendered by Helm as one manifest (text/plain)', tags: TAGS },
      },
    )
    .get(
      '/user/deploy/orders/:id/render/resources',
      ({ me, params, query }) =>
        orders.renderResources(rt, me, params.id, query.skipCRDs === 'true', query.format === 'json' ? 'json' : 'yaml'),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: OrderParams,
        query: ResourcesQuery,
        response: { 200: t.Array(ChartTemplateOutput), ...renderErrors },
        detail: {
          summary: 'The order rendered and converted, one entry per package with its CRDs, manifest file and resources',
          tags: TAGS,
        },
      },
    )
    .get('/user/deploy/orders/:id/helm3', scriptOf('helm3', orders.helm3), {
      signedIn: 'signed-in',
      scope: 'user',
      params: OrderParams,
      response: { 200: ScriptAnswer, ...renderErrors },
      detail: {
        summary:
          'Helm 3 install script (helm upgrade --install per package); with Accept: application/json the [{os, url, command, script}] list',
        tags: TAGS,
      },
    })
    .get('/user/deploy/orders/:id/yaml', scriptOf('yaml', orders.yaml), {
      signedIn: 'signed-in',
      scope: 'user',
      params: OrderParams,
      response: { 200: ScriptAnswer, ...renderErrors },
      detail: {
        summary:
          "kubectl install script (kubectl apply of each package's CRDs and manifest file); with Accept: application/json the [{os, url, command, script}] list",
        tags: TAGS,
      },
    })
    .get(
      '/user/deploy/orders/:id/manifests/:file',
      async ({ me, params }) => text(await orders.manifestFile(rt, me, params.id, params.file), 'application/yaml; charset=utf-8'),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: OrderFileParams,
        response: {
          200: t.String({ description: "The release's manifest, preceded by its Namespace unless that is built in" }),
          ...renderErrors,
        },
        detail: { summary: 'The manifest file <release>.yaml the yaml script applies', tags: TAGS },
      },
    )
    .get(
      '/user/deploy/orders/:id/crds/:file',
      async ({ me, params }) => text(await orders.crdFile(rt, me, params.id, params.file), 'application/yaml; charset=utf-8'),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: OrderFileParams,
        response: { 200: t.String({ description: 'One CRD as YAML' }), ...renderErrors },
        detail: { summary: 'A CRD file <name>.yaml the yaml script applies', tags: TAGS },
      },
    )
}
