import type { ClusterConnection } from '../../src/clusters/connection'
import * as store from '../../src/clusters/store'
import type { UserRow } from '../../src/identity/store'
import type { TestApp } from '../support/app'

/**
 * Registers a cluster without asking it anything (a fixture: import connects and would refuse a
 * dead one). The uid is random unless given.
 */
export async function registrationFixture(
  t: TestApp,
  owner: UserRow,
  name: string,
  connection: ClusterConnection,
  uid: string = crypto.randomUUID(),
): Promise<store.ClusterRow> {
  const sealedCredential = await t.deps.secrets.seal(JSON.stringify(connection.credential))
  return t.deps.db.write((tx) =>
    store.insertCluster(tx, {
      uid,
      ownerId: owner.id,
      name,
      lowerName: name.toLowerCase(),
      server: connection.server,
      caData: connection.caData,
      tlsServerName: connection.tlsServerName,
      insecureSkipTlsVerify: connection.insecureSkipTlsVerify,
      sealedCredential,
    }),
  )
}
