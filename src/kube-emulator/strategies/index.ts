/** Every built-in resource's strategy, by API group (one file each), and what the registry asks of them. */
import { APIEXTENSIONS } from './apiextensions'
import { APPS } from './apps'
import { AUTOSCALING } from './autoscaling'
import { BATCH } from './batch'
import { CORE } from './core'
import { DISCOVERY } from './discovery'
import { NETWORKING } from './networking'
import { POLICY } from './policy'
import { RBAC } from './rbac'
import type { BuiltinEntry } from './strategy'

export { strategyFromCrd } from './apiextensions'
export {
  ALL_VERBS,
  type BuiltinEntry,
  fieldAt,
  metadataDecodeError,
  type ScaleSpec,
  type Strategy,
  type Subresources,
} from './strategy'

/** Built-in resources, keyed `group/resource` (core group ''), with their served versions. */
export const BUILTIN: Record<string, BuiltinEntry> = {
  ...CORE,
  ...APPS,
  ...BATCH,
  ...AUTOSCALING,
  ...NETWORKING,
  ...DISCOVERY,
  ...POLICY,
  ...RBAC,
  ...APIEXTENSIONS,
}
