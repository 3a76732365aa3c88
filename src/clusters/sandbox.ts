import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Deps } from '../deps'
import { findFirstSiteAdmin, findUserByName } from '../identity/store'
import { type Emulator, startEmulator } from '../kube-emulator'
import { registerSandbox, sandboxUid } from './service'

/**
 * Starts the built-in Kubernetes emulator on a loopback port with TLS and registers it as the
 * first admin's cluster `sandbox`, so every proxy route can be tried right after `npm start`.
 * Its kubeconfig is written to `<data dir>/sandbox.kubeconfig` (mode 0600) for kubectl.
 */
export async function startSandbox(deps: Deps): Promise<Emulator> {
  // The emulator's token is cluster-admin: only a site admin may hold it, even when the configured
  // admin name has since been taken by an ordinary account.
  const named = await findUserByName(deps.db.read, deps.config.admin.username)
  const owner = named?.isAdmin ? named : await findFirstSiteAdmin(deps.db.read)
  if (!owner) throw new Error('no site admin to own the sandbox cluster')
  // The emulator keeps the registration's uid as its kube-system uid: the cluster's identity survives restarts.
  const emulator = await startEmulator({ tls: true, seed: true, port: 0, hostname: '127.0.0.1', clusterUid: await sandboxUid(deps, owner) })
  await registerSandbox(deps, owner, {
    server: emulator.url,
    caData: emulator.caCertPem ?? '',
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: emulator.token },
  })
  const kubeconfig = join(deps.config.dataDir, 'sandbox.kubeconfig')
  // It carries the emulator's admin token: owner-only, also when an older file is overwritten.
  writeFileSync(kubeconfig, emulator.kubeconfig(), { mode: 0o600 })
  chmodSync(kubeconfig, 0o600)
  deps.log.info('sandbox cluster ready', { cluster: `${owner.name}/sandbox`, server: emulator.url, kubeconfig })
  return emulator
}
