/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded with
 * `protobufjs` into the JSON form the rest of the emulator works on. client-go's typed clients send
 * protobuf for built-in kinds (Helm stores its releases in Secrets that way), and do not fall back
 * to JSON on a 415, so the kinds they write are decoded here: Secrets, ConfigMaps and DeleteOptions.
 * Answers stay JSON, which those clients accept.
 */
import protobuf from 'protobufjs'
import { kubeStatus } from '../kube'

export const PROTOBUF = 'application/vnd.kubernetes.protobuf'

/** The `k8s\0` prefix before the runtime.Unknown envelope. */
const MAGIC = [0x6b, 0x38, 0x73, 0x00]

const map = (id: number, valueType: string) => ({ keyType: 'string', type: valueType, id })
/** Field numbers from k8s.io/api and k8s.io/apimachinery `generated.proto`. */
const root = protobuf.Root.fromJSON({
  nested: {
    Unknown: {
      fields: {
        typeMeta: { type: 'TypeMeta', id: 1 },
        raw: { type: 'bytes', id: 2 },
        contentEncoding: { type: 'string', id: 3 },
        contentType: { type: 'string', id: 4 },
      },
    },
    TypeMeta: { fields: { apiVersion: { type: 'string', id: 1 }, kind: { type: 'string', id: 2 } } },
    Time: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    OwnerReference: {
      fields: {
        kind: { type: 'string', id: 1 },
        name: { type: 'string', id: 3 },
        uid: { type: 'string', id: 4 },
        apiVersion: { type: 'string', id: 5 },
        controller: { type: 'bool', id: 6 },
        blockOwnerDeletion: { type: 'bool', id: 7 },
      },
    },
    ObjectMeta: {
      fields: {
        name: { type: 'string', id: 1 },
        generateName: { type: 'string', id: 2 },
        namespace: { type: 'string', id: 3 },
        uid: { type: 'string', id: 5 },
        resourceVersion: { type: 'string', id: 6 },
        generation: { type: 'int64', id: 7 },
        labels: map(11, 'string'),
        annotations: map(12, 'string'),
        ownerReferences: { rule: 'repeated', type: 'OwnerReference', id: 13 },
        finalizers: { rule: 'repeated', type: 'string', id: 14 },
      },
    },
    Secret: {
      fields: {
        metadata: { type: 'ObjectMeta', id: 1 },
        data: map(2, 'bytes'),
        type: { type: 'string', id: 3 },
        stringData: map(4, 'string'),
        immutable: { type: 'bool', id: 5 },
      },
    },
    ConfigMap: {
      fields: {
        metadata: { type: 'ObjectMeta', id: 1 },
        data: map(2, 'string'),
        binaryData: map(3, 'bytes'),
        immutable: { type: 'bool', id: 4 },
      },
    },
    Preconditions: { fields: { uid: { type: 'string', id: 1 }, resourceVersion: { type: 'string', id: 2 } } },
    DeleteOptions: {
      fields: {
        gracePeriodSeconds: { type: 'int64', id: 1 },
        preconditions: { type: 'Preconditions', id: 2 },
        orphanDependents: { type: 'bool', id: 3 },
        propagationPolicy: { type: 'string', id: 4 },
        dryRun: { rule: 'repeated', type: 'string', id: 5 },
      },
    },
  },
})

/** Kinds decoded, by `apiVersion/kind` of the envelope. */
const MESSAGES: Record<string, string> = {
  'v1/Secret': 'Secret',
  'v1/ConfigMap': 'ConfigMap',
  'v1/DeleteOptions': 'DeleteOptions',
  'meta.k8s.io/v1/DeleteOptions': 'DeleteOptions',
}

const unsupported = () => kubeStatus.unsupportedMediaType(['application/json', `${PROTOBUF} (Secret, ConfigMap, DeleteOptions)`])

/** A protobuf body as its JSON object (apiVersion and kind from the envelope); 415 for other kinds, 400 when malformed. */
export function decodeProtobuf(bytes: Uint8Array): Record<string, unknown> {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b))
    throw kubeStatus.badRequest('protobuf body without the k8s envelope')
  let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array }
  try {
    envelope = root.lookupType('Unknown').decode(bytes.subarray(MAGIC.length)) as typeof envelope
  } catch {
    throw kubeStatus.badRequest('the protobuf body could not be decoded')
  }
  const apiVersion = envelope.typeMeta?.apiVersion ?? ''
  const kind = envelope.typeMeta?.kind ?? ''
  const message = MESSAGES[`${apiVersion}/${kind}`]
  if (!message) throw unsupported()
  const type = root.lookupType(message)
  try {
    const decoded = type.toObject(type.decode(envelope.raw ?? new Uint8Array()), { bytes: String, longs: Number, defaults: false })
    return { apiVersion, kind, ...decoded }
  } catch {
    throw kubeStatus.badRequest(`the protobuf ${kind} could not be decoded`)
  }
}
