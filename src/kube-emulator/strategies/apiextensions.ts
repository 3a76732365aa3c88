/** The apiextensions group: CustomResourceDefinitions, and the strategies custom resources get from them. */
import { invalidValue, isObject, type JsonObject, type KubeObject, required, type StatusCause } from '../../kube'
import type { BuiltinEntry, Strategy } from './strategy'

export const APIEXTENSIONS: Record<string, BuiltinEntry> = {
  'apiextensions.k8s.io/customresourcedefinitions': {
    versions: ['v1'],
    strategy: {
      kind: 'CustomResourceDefinition',
      singular: 'customresourcedefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
      validate: validateCrd,
    },
  },
}

function validateCrd(obj: KubeObject): StatusCause[] {
  const spec = isObject(obj.spec) ? obj.spec : {}
  const names = isObject(spec.names) ? spec.names : {}
  const causes: StatusCause[] = []
  if (typeof spec.group !== 'string' || !spec.group) causes.push(required('spec.group'))
  if (typeof names.plural !== 'string' || !names.plural) causes.push(required('spec.names.plural'))
  if (typeof names.kind !== 'string' || !names.kind) causes.push(required('spec.names.kind'))
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    causes.push(invalidValue('spec.scope', spec.scope ?? '', 'should be either Cluster or Namespaced'))
  if (!Array.isArray(spec.versions) || !spec.versions.some((v) => isObject(v) && v.served === true)) causes.push(required('spec.versions'))
  if (!causes.length && obj.metadata.name !== `${String(names.plural)}.${String(spec.group)}`)
    causes.push(invalidValue('metadata.name', obj.metadata.name, `must be spec.names.plural+"."+spec.group`))
  return causes
}

/** The strategy of a custom resource, read from its CRD: scope, names, subresources, printer columns. */
export function strategyFromCrd(crd: KubeObject): { group: string; resource: string; versions: string[]; strategy: Strategy } {
  const spec = crd.spec as JsonObject
  const names = spec.names as JsonObject
  const versions = (spec.versions as JsonObject[]).filter((v) => v.served === true)
  versions.sort((a, b) => Number(b.storage === true) - Number(a.storage === true))
  const first = versions[0]
  const subresources = isObject(first.subresources) ? first.subresources : {}
  const scale = isObject(subresources.scale) ? subresources.scale : undefined
  const columns = Array.isArray(first.additionalPrinterColumns) ? (first.additionalPrinterColumns as unknown[]).filter(isObject) : []
  const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : undefined)
  return {
    group: String(spec.group),
    resource: String(names.plural),
    versions: versions.map((v) => String(v.name)),
    strategy: {
      kind: String(names.kind),
      singular: String(names.singular ?? String(names.kind).toLowerCase()),
      namespaced: spec.scope === 'Namespaced',
      custom: true,
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
      tracksGeneration: true,
      returnsDeletedObject: true,
      subresources: {
        ...(isObject(subresources.status) ? { status: true } : {}),
        ...(scale
          ? {
              scale: {
                specReplicasPath: jsonPathKeys(String(scale.specReplicasPath)),
                statusReplicasPath: jsonPathKeys(String(scale.statusReplicasPath)),
                labelSelectorPath: typeof scale.labelSelectorPath === 'string' ? jsonPathKeys(scale.labelSelectorPath) : undefined,
              },
            }
          : {}),
      },
      printerColumns: columns.map((c) => ({
        name: String(c.name),
        type: String(c.type ?? 'string'),
        jsonPath: String(c.jsonPath ?? ''),
        description: typeof c.description === 'string' ? c.description : undefined,
        priority: typeof c.priority === 'number' ? c.priority : 0,
        format: typeof c.format === 'string' ? c.format : undefined,
      })),
    },
  }
}

/** `.spec.replicas` → ['spec', 'replicas']; CRD paths are simple dotted paths. */
function jsonPathKeys(path: string): string[] {
  return path.split('.').filter(Boolean)
}
