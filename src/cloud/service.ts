import type { Actor } from '../authz/actor'
import { rfc3339 } from '../clock'
import type { Deps } from '../deps'
import { AppError, type FieldError } from '../errors'
import { EgressRefused, resolveChecked } from '../net/egress'
import type { CloudCredentialApiForm, CloudCredentialSpec, CredentialType } from './schemas'
import * as store from './store'

export const Messages = {
  notFound: 'credential not found',
  missingBlock: (block: string, type: string) => `a ${type} credential needs its "${block}" block`,
  missingField: 'is required',
  badServiceAccount: 'must be a service-account key file (JSON with client_email and private_key)',
} as const

type BlockKey = Exclude<keyof CloudCredentialSpec, 'name' | 'type' | 'ownerID'>
type Block = Record<string, string | undefined>

interface TypeRule {
  block: BlockKey
  required: readonly string[]
  /** Fields sealed at rest and answered as "". */
  secrets: readonly string[]
  /** Fields holding a URL we will connect to: checked by the egress guard when written. */
  endpoints: readonly string[]
}

/** Per type (docs/decisions.md §4c): its block, required fields, secret fields and endpoint fields. */
export const TYPE_RULES: Record<CredentialType, TypeRule> = {
  Aws: { block: 'aws', required: ['accessKeyID', 'secretAccessKey'], secrets: ['secretAccessKey'], endpoints: ['endpoint'] },
  GoogleCloud: { block: 'googleCloud', required: ['projectID', 'serviceAccount'], secrets: ['serviceAccount'], endpoints: [] },
  Azure: { block: 'azure', required: ['tenantID', 'subscriptionID', 'clientID', 'clientSecret'], secrets: ['clientSecret'], endpoints: [] },
  AzureStorage: { block: 'azureStorage', required: ['account', 'key'], secrets: ['key'], endpoints: ['endpoint'] },
  FleetManager: {
    block: 'fleetmgr',
    required: ['accessKeyID', 'secretAccessKey', 'endpoint'],
    secrets: ['secretAccessKey'],
    endpoints: ['endpoint'],
  },
  DigitalOcean: { block: 'digitalocean', required: ['token'], secrets: ['token'], endpoints: [] },
  Linode: { block: 'linode', required: ['token'], secrets: ['token'], endpoints: [] },
  Vultr: { block: 'vultr', required: ['token'], secrets: ['token'], endpoints: [] },
}

/**
 * A service-account key file splits into its public part (kept readable) and its private key
 * (sealed): on reads the file comes back with `private_key: ""`.
 */
const serviceAccount = {
  split(json: string): { visible: string; privateKey: string } {
    const parsed = parseServiceAccount(json)
    if (!parsed)
      throw new AppError('invalid', 'Validation Failed', [{ field: 'googleCloud.serviceAccount', message: Messages.badServiceAccount }])
    const { private_key: privateKey, ...rest } = parsed
    return { visible: JSON.stringify(rest), privateKey: String(privateKey ?? '') }
  },
  join(visible: string, privateKey: string): string {
    return JSON.stringify({ ...(JSON.parse(visible) as object), private_key: privateKey })
  },
}

function parseServiceAccount(json: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(json)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
    const record = parsed as Record<string, unknown>
    return typeof record.client_email === 'string' ? record : undefined
  } catch {
    return undefined
  }
}

interface Stored {
  visible: Block
  secrets: Record<string, string>
}

/** Splits a block into what is stored readable and what is sealed; empty secrets are left out. */
function splitBlock(type: CredentialType, block: Block): Stored {
  const rule = TYPE_RULES[type]
  const visible: Block = {}
  const secrets: Record<string, string> = {}
  for (const [field, value] of Object.entries(block)) {
    if (value === undefined) continue
    if (!rule.secrets.includes(field)) visible[field] = value
    else if (type === 'GoogleCloud' && value) {
      const parts = serviceAccount.split(value)
      visible[field] = parts.visible
      if (parts.privateKey) secrets[field] = parts.privateKey
    } else if (value) secrets[field] = value
  }
  return { visible, secrets }
}

/** The block with its secrets put back (for use) or blanked (for answers). */
function joinBlock(type: CredentialType, stored: Stored, reveal: boolean): Block {
  const block: Block = { ...stored.visible }
  for (const field of TYPE_RULES[type].secrets) {
    const value = reveal ? (stored.secrets[field] ?? '') : ''
    block[field] = type === 'GoogleCloud' && stored.visible[field] ? serviceAccount.join(stored.visible[field]!, value) : value
  }
  return block
}

function missingFields(type: CredentialType, stored: Stored): FieldError[] {
  const rule = TYPE_RULES[type]
  return rule.required
    .filter((field) => !(rule.secrets.includes(field) ? stored.secrets[field] : stored.visible[field]))
    .map((field) => ({ field: `${rule.block}.${field}`, message: Messages.missingField }))
}

async function checkEndpoints(deps: Deps, type: CredentialType, stored: Stored): Promise<void> {
  const rule = TYPE_RULES[type]
  for (const field of rule.endpoints) {
    const value = stored.visible[field]
    if (!value) continue
    const fieldName = `${rule.block}.${field}`
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw new AppError('invalid', 'Validation Failed', [{ field: fieldName, message: 'must be an http(s) URL' }])
    }
    try {
      await resolveChecked(url, { allowPrivate: deps.config.allowPrivateEndpoints })
    } catch (error) {
      if (error instanceof EgressRefused)
        throw new AppError('invalid', `${fieldName} is not allowed: ${error.message}`, [{ field: fieldName, message: error.message }])
      throw error
    }
  }
}

/** Validates the spec against its type; `previous` supplies secrets a PUT left empty. Throws invalid. */
async function prepare(deps: Deps, spec: CloudCredentialSpec, previous?: { type: CredentialType; stored: Stored }): Promise<Stored> {
  const rule = TYPE_RULES[spec.type]
  const block = spec[rule.block] as Block | undefined
  if (!block)
    throw new AppError('invalid', Messages.missingBlock(rule.block, spec.type), [{ field: rule.block, message: Messages.missingField }])
  const stored = splitBlock(spec.type, block)
  if (previous?.type === spec.type) {
    stored.secrets = { ...previous.stored.secrets, ...stored.secrets }
    // A secret field left out entirely keeps its readable part too (the key file around a private key).
    for (const field of rule.secrets) stored.visible[field] ??= previous.stored.visible[field]
  }
  const missing = missingFields(spec.type, stored)
  if (missing.length > 0) throw new AppError('invalid', `missing ${missing.map((m) => m.field).join(', ')}`, missing)
  await checkEndpoints(deps, spec.type, stored)
  return stored
}

async function storedOf(deps: Deps, row: store.CredentialRow): Promise<Stored> {
  return {
    visible: JSON.parse(row.block) as Block,
    secrets: JSON.parse(await deps.secrets.open(row.sealedSecrets)) as Record<string, string>,
  }
}

function present(row: store.CredentialRow): CloudCredentialApiForm {
  const type = row.type as CredentialType
  const block = joinBlock(type, { visible: JSON.parse(row.block) as Block, secrets: {} }, false)
  return {
    name: row.name,
    type,
    ownerID: row.ownerId,
    [TYPE_RULES[type].block]: block,
    creationTimestamp: rfc3339(row.createdAt),
  } as CloudCredentialApiForm
}

export interface CredentialFilters {
  credential_type?: string[]
  fleetmgr_endpoint?: string
}

/** The caller's credentials, secrets blanked; `credential_type` and `fleetmgr_endpoint` narrow the list. */
export async function listCredentials(deps: Deps, actor: Actor, filters: CredentialFilters): Promise<CloudCredentialApiForm[]> {
  const rows = await store.listCredentials(deps.db.read, actor.user.id)
  const types = filters.credential_type
    ?.flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean)
  return rows
    .filter((row) => !types?.length || types.includes(row.type))
    .filter(
      (row) =>
        filters.fleetmgr_endpoint === undefined ||
        (row.type === 'FleetManager' && (JSON.parse(row.block) as Block).endpoint === filters.fleetmgr_endpoint),
    )
    .map(present)
}

/** One of the caller's credentials, secrets blanked. Throws notFound. */
export async function getCredential(deps: Deps, actor: Actor, name: string): Promise<CloudCredentialApiForm> {
  const row = await store.findCredential(deps.db.read, actor.user.id, name)
  if (!row) throw new AppError('notFound', Messages.notFound)
  return present(row)
}

/** Stores a new credential owned by the caller (a body's ownerID is ignored). Throws invalid, conflict. */
export async function createCredential(deps: Deps, actor: Actor, spec: CloudCredentialSpec): Promise<void> {
  const stored = await prepare(deps, spec)
  const sealedSecrets = await deps.secrets.seal(JSON.stringify(stored.secrets))
  await deps.db.write((tx) =>
    store.insertCredential(tx, {
      ownerId: actor.user.id,
      name: spec.name,
      type: spec.type,
      block: JSON.stringify(stored.visible),
      sealedSecrets,
    }),
  )
}

/** Replaces the caller's credential named in the body; empty secrets keep the stored ones. Throws notFound, invalid. */
export async function replaceCredential(deps: Deps, actor: Actor, spec: CloudCredentialSpec): Promise<void> {
  const row = await store.findCredential(deps.db.read, actor.user.id, spec.name)
  if (!row) throw new AppError('notFound', Messages.notFound)
  const stored = await prepare(deps, spec, { type: row.type as CredentialType, stored: await storedOf(deps, row) })
  const sealedSecrets = await deps.secrets.seal(JSON.stringify(stored.secrets))
  const replaced = await deps.db.write((tx) =>
    store.replaceCredential(tx, actor.user.id, spec.name, {
      type: spec.type,
      block: JSON.stringify(stored.visible),
      sealedSecrets,
    }),
  )
  if (!replaced) throw new AppError('notFound', Messages.notFound)
}

export async function deleteCredential(deps: Deps, actor: Actor, name: string): Promise<void> {
  if (!(await deps.db.write((tx) => store.deleteCredential(tx, actor.user.id, name)))) throw new AppError('notFound', Messages.notFound)
}

/** The caller's credential with its secrets, for talking to the provider. Throws notFound. */
export async function revealCredential(deps: Deps, actor: Actor, name: string): Promise<{ type: CredentialType; block: Block }> {
  const row = await store.findCredential(deps.db.read, actor.user.id, name)
  if (!row) throw new AppError('notFound', Messages.notFound)
  const type = row.type as CredentialType
  return { type, block: joinBlock(type, await storedOf(deps, row), true) }
}
