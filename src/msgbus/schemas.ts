import { t } from 'elysia'

export const MsgbusCredentialsResponse = t.Object(
  {
    msgbusEndpoints: t.Array(t.String(), { description: 'NATS server URLs (MSGBUS_URLS)' }),
    credentials: t.String({ description: 'Standard base64 of a NATS .creds file (user JWT and seed; LF line endings, trailing newline)' }),
  },
  { title: 'MsgbusCredentialsResponse' },
)
export type MsgbusCredentialsResponse = typeof MsgbusCredentialsResponse.static

export const MsgbusAccount = t.Object(
  {
    id: t.Integer({ description: 'Row id, used to revoke' }),
    uid: t.Integer({ description: 'The platform user the key was issued to' }),
    accountType: t.String({ description: '`user`, `admin`, `cluster-resource-history`, `org` or `cluster`' }),
    msgbusPubKey: t.String({ description: 'The NATS user public key (U…), the `sub` of its JWT' }),
    clusterID: t.String({ description: 'Cluster UID for cluster credentials; empty otherwise' }),
    productName: t.String({ description: 'Product the credential was issued for; empty otherwise' }),
    revoked: t.Boolean({ description: 'Revoked: the servers refuse it and dropped its connections' }),
  },
  { title: 'MsgbusAccount', description: 'One issued message-bus user key' },
)
export type MsgbusAccount = typeof MsgbusAccount.static

export const MsgbusTokenParams = t.Object({
  id: t.Numeric({ minimum: 1, description: 'MsgbusAccount id' }),
})

export const UserCredentialsQuery = t.Object({
  username: t.Optional(t.String({ description: 'Whose personal credentials; the caller when omitted' })),
})

export const ClusterHistoryQuery = t.Object({
  owner: t.Optional(t.String({ description: 'Owner (user or organization) of the cluster; required (400 without)' })),
  cluster: t.Optional(t.String({ description: 'Cluster name; required (400 without)' })),
})
