/** Shapes shared by the emulator's modules. Objects are plain JSON; only metadata is typed. */

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

export interface OwnerReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  controller?: boolean
  blockOwnerDeletion?: boolean
}

interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
  finalizers?: string[]
  [key: string]: unknown
}

export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata: ObjectMeta
  [key: string]: unknown
}

/** A JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Deep copy of a JSON value; stored objects never leak references to callers. */
export const clone = <T>(v: T): T => structuredClone(v)
