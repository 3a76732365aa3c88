/**
 * Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`). Kinds with a printer
 * (printers.ts) get their kubectl columns; custom resources get their CRD's
 * additionalPrinterColumns; everything else Name and Age.
 */

import { isObject, type KubeObject } from '../kube'
import { AGE, type Column, humanDuration, NAME, PRINTERS } from './printers'
import type { Resource } from './registry'

export type IncludeObject = 'None' | 'Metadata' | 'Object'

/** Reads a CRD printer column's JSONPath (`.a.b`, `.a[0].b`); anything fancier prints empty. */
function readJsonPath(o: KubeObject, path: string): unknown {
  let cur: unknown = o
  for (const part of path.split('.').filter(Boolean)) {
    const bracket = part.indexOf('[')
    const key = bracket >= 0 ? part.slice(0, bracket) : part
    cur = isObject(cur) ? cur[key] : undefined
    if (bracket >= 0) {
      const index = Number(part.slice(bracket + 1, part.indexOf(']', bracket)))
      cur = Array.isArray(cur) && Number.isInteger(index) ? cur[index] : undefined
    }
  }
  return cur
}

function columnsFor(r: Resource): Column[] {
  const builtin = PRINTERS[`${r.group}/${r.resource}`]
  if (builtin) return builtin
  const crd = r.strategy.printerColumns ?? []
  if (!crd.length) return [NAME, AGE]
  return [
    NAME,
    ...crd.map(
      (c): Column => ({
        name: c.name,
        type: c.type === 'date' ? 'string' : c.type,
        format: c.format,
        description: c.description ?? c.name,
        priority: c.priority ?? 0,
        cell: (o) => {
          const v = readJsonPath(o, c.jsonPath)
          if (c.type === 'date' && typeof v === 'string') return humanDuration(Date.now() - Date.parse(v))
          if (v === undefined || v === null) return ''
          return typeof v === 'object' ? JSON.stringify(v) : (v as string | number | boolean)
        },
      }),
    ),
  ]
}

/** A `meta.k8s.io/v1` Table for the objects; list metadata (resourceVersion, continue) passes through. */
export function toTable(r: Resource, objects: KubeObject[], listMeta: Record<string, unknown>, includeObject: IncludeObject) {
  const columns = columnsFor(r)
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map(({ name, type, format, description, priority }) => ({
      name,
      type,
      format: format ?? '',
      description,
      priority,
    })),
    rows: objects.map((o) => ({
      cells: columns.map((c) => c.cell(o)),
      ...(includeObject === 'None'
        ? {}
        : {
            object: includeObject === 'Object' ? o : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
          }),
    })),
  }
}
