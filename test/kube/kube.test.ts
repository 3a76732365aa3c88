import { describe, expect, test } from 'bun:test'
import {
  apiPath,
  applyJsonPatch,
  jsonPatchDiff,
  KubeStatusError,
  kubeStatus,
  parseApiPath,
  parseGroupVersion,
  pathSegmentErrors,
  validateName,
} from '../../src/kube'

const invalid = (message: string) =>
  kubeStatus.invalid({ group: '', kind: 'ConfigMap' }, 'x', [{ reason: 'FieldValueInvalid', message, field: 'patch' }])
const codeOf = (fn: () => unknown) => {
  try {
    fn()
  } catch (e) {
    return e instanceof KubeStatusError ? e.code : -1
  }
  return 0
}

describe('resource paths', () => {
  test('a namespaced core path with a subresource → every part named', () => {
    expect(parseApiPath('/api/v1/namespaces/demo/pods/web-1/log')).toEqual({
      group: '',
      version: 'v1',
      namespace: 'demo',
      resource: 'pods',
      name: 'web-1',
      subresource: 'log',
    })
  })

  test("a group path without namespace, and a namespace's own status → cluster-scoped", () => {
    expect(parseApiPath('/apis/apps/v1/deployments')).toMatchObject({
      group: 'apps',
      version: 'v1',
      namespace: '',
      resource: 'deployments',
      name: '',
    })
    expect(parseApiPath('/api/v1/namespaces/demo/status')).toMatchObject({
      namespace: '',
      resource: 'namespaces',
      name: 'demo',
      subresource: 'status',
    })
  })

  test('a path that is no resource path → undefined; too many segments → undefined', () => {
    expect(parseApiPath('/version')).toBeUndefined()
    expect(parseApiPath('/apis/apps')).toBeUndefined()
    expect(parseApiPath('/api/v1/namespaces/a/pods/b/log/extra')).toBeUndefined()
  })

  test('an encoded ".." or "/" as a name → 400 BadRequest, never a walk out of the path', () => {
    expect(codeOf(() => parseApiPath('/api/v1/namespaces/demo/configmaps/%2E%2E'))).toBe(400)
    expect(codeOf(() => parseApiPath('/api/v1/namespaces/a%2Fb/configmaps'))).toBe(400)
    expect(codeOf(() => parseApiPath('/api/v1/namespaces/demo/configmaps/%E0%A4%A'))).toBe(400)
  })

  test('apiPath builds the path back with each segment encoded; apiVersion strings split into group and version', () => {
    expect(apiPath({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web', subresource: 'scale' })).toBe(
      '/apis/apps/v1/namespaces/demo/deployments/web/scale',
    )
    expect(apiPath({ group: '', version: 'v1', resource: 'configmaps', namespace: 'a b' })).toBe('/api/v1/namespaces/a%20b/configmaps')
    expect(parseGroupVersion('v1')).toEqual({ group: '', version: 'v1' })
    expect(parseGroupVersion('networking.k8s.io/v1')).toEqual({ group: 'networking.k8s.io', version: 'v1' })
  })
})

describe('names', () => {
  test('path segments: ".", "..", "/" and "%" are refused with apimachinery\'s words', () => {
    expect(pathSegmentErrors('..')).toEqual(["may not be '..'"])
    expect(pathSegmentErrors('a/b%')).toEqual(["may not contain '/'", "may not contain '%'"])
    expect(pathSegmentErrors('web-1')).toEqual([])
  })

  test('object names: missing → Required; not a subdomain → Invalid; a label-only kind refuses dots', () => {
    expect(validateName(undefined, false)[0].reason).toBe('FieldValueRequired')
    expect(validateName('Bad_Name', false)[0].message).toContain('a lowercase RFC 1123 subdomain')
    expect(validateName('a.b', true)[0].message).toContain('a lowercase RFC 1123 label')
    expect(validateName('a.b', false)).toEqual([])
  })
})

describe('JSON patch', () => {
  test('a failed test or a missing path → 422 through `invalid`; a malformed operation → 400', () => {
    expect(codeOf(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }], invalid))).toBe(422)
    expect(codeOf(() => applyJsonPatch({ a: 1 }, [{ op: 'remove', path: '/b' }], invalid))).toBe(422)
    expect(codeOf(() => applyJsonPatch({ a: 1 }, [{ op: 'frobnicate', path: '/a' }], invalid))).toBe(400)
    expect(codeOf(() => applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/__proto__/x', value: 1 }], invalid))).toBe(400)
  })

  test('patching leaves the input document untouched', () => {
    const doc = { data: { a: '1' } }
    expect(applyJsonPatch(doc, [{ op: 'replace', path: '/data/a', value: '2' }], invalid)).toEqual({ data: { a: '2' } })
    expect(doc).toEqual({ data: { a: '1' } })
  })

  test('the diff of two documents, applied to the first, gives the second (removals included)', () => {
    const from = { metadata: { labels: { a: '1', gone: 'x' } }, spec: { ports: [{ port: 80 }, { port: 81 }] } }
    const to = { metadata: { labels: { a: '2' } }, spec: { ports: [{ port: 80 }] } }
    const ops = jsonPatchDiff(from, to)
    expect(ops.some((o) => o.op === 'remove')).toBe(true)
    expect(applyJsonPatch(from, ops, invalid)).toEqual(to)
  })
})
