import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import YAML from 'yaml'
import { clientFiles } from '../config'
import { type Command, CommandFailed, PROGRAM, parse, parseCommandArgs, print, UsageError } from './command'
import { apiGet, type SignedIn, savedSignIn, writePrivateFile } from './platform-client'

export const clusters: Command = {
  summary: 'list the clusters the signed-in user may use',
  usage: `Usage: ${PROGRAM} clusters

Lists, as OWNER/CLUSTER, every cluster the user signed in with "login" may use: their own, those of
organizations they own or administer, and those granted to their teams.`,
  async run(args) {
    parse(args, {})
    const res = await apiGet(savedSignIn(), '/api/v1/user/clusters?all=true')
    const list = (await res.json()) as { ownerName: string; name: string; status: { status?: string }; kubernetesVersion: string }[]
    if (list.length === 0) return print('No clusters yet.')
    const rows = list.map((c) => [`${c.ownerName}/${c.name}`, c.status.status ?? '', c.kubernetesVersion])
    const width = Math.max(...rows.map(([name]) => name!.length), 'CLUSTER'.length) + 2
    return print(
      [['CLUSTER', 'STATUS', 'VERSION'], ...rows]
        .map(([name, status, version]) => `${name!.padEnd(width)}${status!.padEnd(14)}${version}`)
        .join('\n'),
    )
  },
}

type Named = { name: string }
interface Kubeconfig {
  clusters?: (Named & { cluster: Record<string, unknown> })[]
  users?: Named[]
  contexts?: Named[]
  'current-context'?: string
  [field: string]: unknown
}

/** `entries` with `added` in place of the entry of the same name (or appended): the other entries and their fields untouched. */
function replaced<T extends Named>(entries: T[] | undefined, added: T[] | undefined): T[] {
  const result = [...(entries ?? [])]
  for (const entry of added ?? []) {
    const at = result.findIndex((e) => e.name === entry.name)
    if (at < 0) result.push(entry)
    else result[at] = entry
  }
  return result
}

/** Merges `downloaded` into the kubeconfig at `file` (kept mode 0600); current-context changes only with `use`. */
function mergeInto(file: string, downloaded: Kubeconfig, use: boolean): { context: string; existed: boolean } {
  let current: Kubeconfig = { apiVersion: 'v1', kind: 'Config', preferences: {} }
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    // No file yet: it is created.
  }
  if (text.trim() !== '') {
    const parsed = YAML.parse(text) as unknown
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CommandFailed(`${file} is not a kubeconfig`)
    current = parsed as Kubeconfig
  }
  const context = downloaded['current-context']!
  const existed = (current.contexts ?? []).some((c) => c.name === context)
  const merged: Kubeconfig = {
    ...current,
    clusters: replaced(current.clusters, downloaded.clusters),
    users: replaced(current.users, downloaded.users),
    contexts: replaced(current.contexts, downloaded.contexts),
  }
  if (use || !merged['current-context']) merged['current-context'] = context
  writePrivateFile(file, YAML.stringify(merged))
  return { context, existed }
}

/** The kubeconfig the platform hands out, with the CA confirmed at login when the platform names none (a TLS proxy in front). */
function withLoginCa(kubeconfig: Kubeconfig, signedIn: SignedIn): Kubeconfig {
  if (!signedIn.ca) return kubeconfig
  const ca = Buffer.from(signedIn.ca).toString('base64')
  for (const entry of kubeconfig.clusters ?? []) entry.cluster['certificate-authority-data'] ??= ca
  return kubeconfig
}

export const kubeconfig: Command = {
  summary: 'write a kubeconfig of a cluster (--merge: into your kubeconfig as a new context)',
  usage: `Usage: ${PROGRAM} kubeconfig <owner>/<cluster> [--readonly] [--merge] [--use]

Downloads a kubeconfig of the cluster for the user signed in with "login" (a new token limited to
that cluster, replacing the one of an earlier download) and prints it. --readonly: a read-only
token. --merge: adds it as a context to $KUBECONFIG's first existing file (else its first, else
~/.kube/config), replacing entries of the same name; the current context stays unless --use.`,
  async run(args) {
    const { values, positionals } = parseCommandArgs(() =>
      parseArgs({
        args,
        options: { readonly: { type: 'boolean' }, merge: { type: 'boolean' }, use: { type: 'boolean' } },
        strict: true,
        allowPositionals: true,
      }),
    )
    const [owner, cluster, ...more] = (positionals[0] ?? '').split('/')
    if (positionals.length !== 1 || !owner || !cluster || more.length > 0) throw new UsageError('name the cluster as <owner>/<cluster>')
    if (values.use && !values.merge) throw new UsageError('--use goes with --merge')
    const signedIn = savedSignIn()
    const path = `/api/v1/clustersv2/${encodeURIComponent(owner)}/${encodeURIComponent(cluster)}/kubeconfig${values.readonly ? '?readonly=true' : ''}`
    const downloaded = withLoginCa(YAML.parse(await (await apiGet(signedIn, path)).text()) as Kubeconfig, signedIn)
    if (!values.merge) return print(YAML.stringify(downloaded).trimEnd())
    const { kubeconfigFile } = clientFiles()
    const { context, existed } = mergeInto(kubeconfigFile, downloaded, values.use === true)
    print(`${existed ? 'Updated' : 'Added'} context "${context}" ${existed ? 'in' : 'to'} ${kubeconfigFile}`)
    return print(values.use ? `Switched to context "${context}".` : `Use it with: kubectl --context ${context} get pods`)
  },
}
