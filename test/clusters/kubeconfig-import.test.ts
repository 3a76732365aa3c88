import { expect, test } from 'bun:test'
import { connectionFromKubeconfig } from '../../src/clusters/connection'
import { AppError } from '../../src/errors'

const context = 'current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n'
const MALFORMED: [what: string, kubeconfig: string][] = [
  ['a cluster entry that is a string', `${context}clusters: [{name: k, cluster: "x"}]\nusers: [{name: u, user: {token: t}}]`],
  ['a user entry that is a string', `${context}clusters: [{name: k, cluster: {server: "https://a"}}]\nusers: [{name: u, user: "x"}]`],
  ['contexts as a map instead of a list', 'current-context: c\ncontexts: {c: {cluster: k}}'],
  ['clusters as a string', `${context}clusters: nope\nusers: []`],
  ['users as a number', `${context}clusters: [{name: k, cluster: {server: "https://a"}}]\nusers: 5`],
  ['a context entry that is a list', 'current-context: c\ncontexts: [{name: c, context: [1, 2]}]'],
]

for (const [what, kubeconfig] of MALFORMED)
  test(`someone imports a kubeconfig with ${what} → invalid (422), not a TypeError (500)`, () => {
    let thrown: unknown
    try {
      connectionFromKubeconfig(kubeconfig)
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(AppError)
    expect((thrown as AppError).kind).toBe('invalid')
  })
