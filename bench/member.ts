// The member cluster the proxy benches measure against: the emulator over TLS with 500 ConfigMaps in
// the namespace `bench` (the list case; `cm-7` is the one-object case), and a fetch that speaks to it
// with its own token and CA.

import { type EmulatorOptions, startEmulator } from '../src/kube-emulator'

export type MemberFetch = (path: string, init?: RequestInit) => Promise<Response>

/** Starts the emulator (`seed`: its demo namespace too) and creates the 500 ConfigMaps. */
export async function startBenchMember(options: Pick<EmulatorOptions, 'logIntervalMs'> = {}) {
  const member = await startEmulator({ tls: true, seed: true, ...options })
  const memberFetch: MemberFetch = (path, init = {}) =>
    fetch(`${member.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
      tls: { ca: member.caCertPem },
    } as RequestInit)
  await memberFetch('/api/v1/namespaces', { method: 'POST', body: JSON.stringify({ metadata: { name: 'bench' } }) })
  for (let i = 0; i < 500; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        memberFetch('/api/v1/namespaces/bench/configmaps', {
          method: 'POST',
          body: JSON.stringify({ metadata: { name: `cm-${i + j}` }, data: { index: String(i + j) } }),
        }),
      ),
    )
  return { member, memberFetch }
}

/** The two cases on the kubectl path: one object and the 500-item list. */
export const MEMBER_CASES: [name: string, path: string][] = [
  ['GET one object', '/api/v1/namespaces/bench/configmaps/cm-7'],
  ['GET a 500-item list', '/api/v1/namespaces/bench/configmaps'],
]
