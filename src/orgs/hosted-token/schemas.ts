import { t } from 'elysia'

export const HostedToken = t.Object(
  {
    hostedToken: t.String({
      description: "ES256 JWT {sub: login, uid, orgs, iat, exp: iat + 600} for the hosting vendor's messaging and auth services",
    }),
  },
  { title: 'HostedToken' },
)
export type HostedToken = typeof HostedToken.static

export const HostedTokenJwks = t.Object(
  {
    keys: t.Array(
      t.Object({
        kty: t.String({ description: 'Key type, EC' }),
        crv: t.String({ description: 'Curve, P-256' }),
        x: t.String({ description: 'Public point x, base64url' }),
        y: t.String({ description: 'Public point y, base64url' }),
        kid: t.String({ description: "Key id: the RFC 7638 thumbprint, also in each token's header" }),
        alg: t.String({ description: 'ES256' }),
        use: t.String({ description: 'sig' }),
      }),
      { description: 'The key signing hosted tokens' },
    ),
  },
  { description: 'JSON Web Key Set of hosted tokens' },
)
export type HostedTokenJwks = typeof HostedTokenJwks.static
