import { readFileSync } from 'node:fs'
import { recordCommand } from '../audit/service'
import type { Actor } from '../authz/actor'
import { clusterScopeFor } from '../authz/clusters'
import { statusProbes } from '../clusters/probe'
import * as clusters from '../clusters/service'
import { loadConfig } from '../config'
import type { Deps } from '../deps'
import { findFirstSiteAdmin } from '../identity/store'
import { type Command, CommandFailed, PROGRAM, parse, UsageError, withDeps } from './command'

/** The command line acts as the site admin: whoever runs it can read the database anyway. */
async function operator(deps: Deps): Promise<Actor> {
  const admin = await findFirstSiteAdmin(deps.db.read)
  if (!admin) throw new CommandFailed('no site admin yet: start the server once (it creates one) or run admin create-user --admin')
  return { user: admin, credential: 'basic-password', scopes: undefined }
}

export const clusterImport: Command = {
  summary: 'register a cluster from a kubeconfig (the platform connects to it first)',
  usage: `Usage: ${PROGRAM} cluster import --owner OWNER --name NAME --kubeconfig FILE [--context CONTEXT] [--display-name TEXT]

Registers the kubeconfig's cluster (its current context, or CONTEXT) for the user or organization
OWNER. The platform connects first and refuses, naming the reason, when it cannot. Loopback or
private API servers need PLATFORM_ALLOW_PRIVATE_ENDPOINTS=true.`,
  async run(args) {
    const values = parse(args, {
      owner: { type: 'string' },
      name: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'display-name': { type: 'string' },
    })
    if (!values.owner || !values.name || !values.kubeconfig) throw new UsageError('--owner, --name and --kubeconfig are required')
    let kubeconfig: string
    try {
      kubeconfig = readFileSync(values.kubeconfig, 'utf8')
    } catch (error) {
      throw new CommandFailed(`cannot read ${values.kubeconfig}: ${(error as { code?: string }).code ?? String(error)}`)
    }
    const info = await withDeps(loadConfig(), async (deps) => {
      const imported = await clusters.importCluster(deps, statusProbes(deps), await operator(deps), values.owner!, {
        name: values.name!,
        kubeconfig,
        context: values.context,
        displayName: values['display-name'],
      })
      const cluster = `${imported.ownerName}/${imported.name}`
      await recordCommand(deps, { command: 'cluster import', target: { cluster }, cluster })
      return imported
    })
    console.log(`registered ${info.ownerName}/${info.name} (uid ${info.uid}, ${info.kubernetesVersion}, ${info.nodeCount} nodes)`)
    return 0
  },
}

export const clusterList: Command = {
  summary: 'list registered clusters',
  usage: `Usage: ${PROGRAM} cluster list [--owner OWNER]

Lists registered clusters (all owners, or OWNER's) with their live status.`,
  async run(args) {
    const values = parse(args, { owner: { type: 'string' } })
    const rows = await withDeps(loadConfig(), async (deps) => clusters.listAllClusters(deps, statusProbes(deps), values.owner))
    const table = [
      ['OWNER', 'NAME', 'UID', 'SERVER', 'STATUS', 'VERSION', 'NODES', 'AGE'],
      ...rows.map((c) => [c.ownerName, c.name, c.uid, c.endpoint, c.status.phase, c.kubernetesVersion, String(c.nodeCount), c.age]),
    ]
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)))
    for (const row of table)
      console.log(
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
    return 0
  },
}

export const clusterRemove: Command = {
  summary: 'forget a cluster and its stored credentials',
  usage: `Usage: ${PROGRAM} cluster remove --owner OWNER --name NAME

Forgets the cluster and its stored credentials; nothing is done to the cluster itself.`,
  async run(args) {
    const values = parse(args, { owner: { type: 'string' }, name: { type: 'string' } })
    if (!values.owner || !values.name) throw new UsageError('--owner and --name are required')
    await withDeps(loadConfig(), async (deps) => {
      await clusters.removeCluster(
        deps,
        statusProbes(deps),
        await clusterScopeFor(deps.clusterFacts, await operator(deps), 'manage', values.owner!, values.name!),
      )
      const cluster = `${values.owner}/${values.name}`
      await recordCommand(deps, { command: 'cluster remove', target: { cluster }, cluster })
    })
    console.log(`removed ${values.owner}/${values.name}`)
    return 0
  },
}
