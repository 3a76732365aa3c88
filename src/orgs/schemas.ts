import { t } from 'elysia'
import { ORG_PERMISSIONS } from '../authz/permissions'

const VisibilityName = (description: string) => t.Union([t.Literal('public'), t.Literal('limited'), t.Literal('private')], { description })
const VisibilityOrEmpty = (description: string) =>
  t.Union([t.Literal(''), t.Literal('public'), t.Literal('limited'), t.Literal('private')], { description })

export const Organization = t.Object(
  {
    id: t.Integer({ description: 'Organization id (shares the id space of users)' }),
    username: t.String({ description: 'Organization slug' }),
    name: t.String({ description: 'Same as username, for Gitea clients' }),
    full_name: t.String({ description: 'Display name' }),
    avatar_url: t.String({ description: 'Absolute URL of the avatar image' }),
    description: t.String({ description: 'About the organization' }),
    website: t.String({ description: 'Website URL' }),
    location: t.String({ description: 'Free-text location' }),
    fleetmgrManagementClusterEndPoint: t.String({
      description: 'Management cluster endpoint of fleet-manager-origin orgs; empty otherwise',
    }),
    visibility: VisibilityName('Who may see the organization'),
    orgType: t.Integer({ description: 'Visibility as a number: 0 public, 1 limited, 2 private' }),
  },
  { title: 'Organization' },
)
export type Organization = typeof Organization.static

const orgFields = {
  full_name: t.Optional(t.String({ maxLength: 100, description: 'Display name' })),
  description: t.Optional(t.String({ maxLength: 255, description: 'About the organization' })),
  website: t.Optional(t.String({ maxLength: 255, description: 'Website, an http(s) URL or empty' })),
  location: t.Optional(t.String({ maxLength: 50, description: 'Free-text location' })),
  orgType: t.Optional(VisibilityName('Visibility (the request form of orgType); `visibility` wins when both are given')),
  fleetmgrManagementClusterEndPoint: t.Optional(
    t.String({ maxLength: 255, description: 'Management cluster endpoint, for fleet-manager-origin orgs' }),
  ),
  visibility: t.Optional(VisibilityOrEmpty('Who may see the organization; empty keeps the default (public) or the current value')),
}

export const CreateOrgOption = t.Object(
  {
    username: t.String({ description: 'Organization slug, unique among users and organizations', examples: ['acme'] }),
    ...orgFields,
  },
  { title: 'CreateOrgOption' },
)
export type CreateOrgOption = typeof CreateOrgOption.static

export const EditOrgOption = t.Object(orgFields, { title: 'EditOrgOption', description: 'Absent fields are left unchanged' })
export type EditOrgOption = typeof EditOrgOption.static

export const CreateOrgParams = t.Object(
  {
    org_name: t.String({ description: 'Organization slug' }),
    full_name: t.Optional(t.String({ maxLength: 100, description: 'Display name' })),
    description: t.Optional(t.String({ maxLength: 255, description: 'About the organization' })),
    website: t.Optional(t.String({ maxLength: 255, description: 'Website, an http(s) URL or empty' })),
    location: t.Optional(t.String({ maxLength: 50, description: 'Free-text location' })),
    visibility: t.Optional(VisibilityOrEmpty('Who may see the organization; public when empty')),
    avatar: t.Optional(t.File({ description: 'Avatar image (PNG, JPEG, GIF or WebP)' })),
  },
  { title: 'CreateOrgParams' },
)
export type CreateOrgParams = typeof CreateOrgParams.static

const TeamPermission = t.Union([t.Literal('read'), t.Literal('write'), t.Literal('admin')], {
  description: 'Access the team grants: admin makes its members org admins; read when omitted on create',
})
const Units = t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 64, description: 'Enabled feature units, e.g. repo.code' })
const RoleIds = t.Array(t.Integer({ minimum: 1 }), {
  maxItems: 64,
  description: 'Custom roles of this org whose permission strings the team adds',
})

export const Team = t.Object(
  {
    id: t.Integer({ description: 'Team id' }),
    name: t.String({ description: 'Team name, unique within the organization' }),
    description: t.String({ description: 'Free text shown in team lists' }),
    organization: t.Union([Organization, t.Null()], { description: "The team's organization; null in the per-org team list" }),
    permission: t.Union([t.Literal('none'), t.Literal('read'), t.Literal('write'), t.Literal('admin'), t.Literal('owner')], {
      description: 'Access the team grants; owner only for the Owners team',
    }),
    units: t.Array(t.String(), { description: 'Enabled feature units' }),
    type: t.Union([t.Literal('owners'), t.Literal('custom')], {
      description: 'owners for the Owners team made with the org, custom for teams made later',
    }),
    role_ids: t.Array(t.Integer(), { description: 'Custom role ids' }),
  },
  { title: 'Team' },
)
export type Team = typeof Team.static

export const CreateTeamOption = t.Object(
  {
    name: t.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[-.\\w]+$',
      description: 'Team name: letters, digits, "-", "_", "."; unique within the organization',
    }),
    description: t.Optional(t.String({ maxLength: 255, description: 'Free text shown in team lists' })),
    permission: t.Optional(TeamPermission),
    units: t.Optional(Units),
    role_ids: t.Optional(RoleIds),
  },
  { title: 'CreateTeamOption' },
)
export type CreateTeamOption = typeof CreateTeamOption.static

export const EditTeamOption = t.Partial(CreateTeamOption, {
  title: 'EditTeamOption',
  description: 'Absent fields are left unchanged; the Owners team keeps its name and permission',
})
export type EditTeamOption = typeof EditTeamOption.static

export const CustomRole = t.Object(
  {
    id: t.Integer({ description: "Role id, for a team's role_ids" }),
    name: t.String({ description: 'Role name, unique within the organization' }),
    permissions: t.Array(t.String(), { description: 'Permission strings the role adds' }),
  },
  { description: 'A custom role of an organization' },
)
export type CustomRole = typeof CustomRole.static

export const CreateCustomRoleOption = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64, description: 'Role name, unique within the organization' }),
    permissions: t.Array(t.Union(ORG_PERMISSIONS.map((p) => t.Literal(p))), {
      minItems: 1,
      maxItems: ORG_PERMISSIONS.length,
      description: 'Org permission strings the role adds',
    }),
  },
  { title: 'CreateCustomRoleOption' },
)
export type CreateCustomRoleOption = typeof CreateCustomRoleOption.static

export const OrgClaimableCheckResp = t.Object(
  {
    isClaimable: t.Boolean({ description: 'Whether an unclaimed standalone org waits for its buyer' }),
    claimID: t.String({ description: 'Claim id of the oldest such org; empty when none' }),
  },
  { title: 'OrgClaimableCheckResp' },
)

export const OrgParams = t.Object({ org: t.String({ description: 'Organization slug' }) })
export const OrgUserParams = t.Object({
  org: t.String({ description: 'Organization slug' }),
  username: t.String({ description: 'User name' }),
})
export const TeamParams = t.Object({ teamId: t.String({ description: 'Team id' }) })
export const TeamUserParams = t.Object({ teamId: t.String({ description: 'Team id' }), username: t.String({ description: 'User name' }) })
export const MemberActionParams = t.Object({
  org: t.String({ description: 'Organization slug' }),
  action: t.String({ description: 'private, public, remove or leave' }),
})
export const MemberActionQuery = t.Object({ uid: t.Optional(t.String({ description: 'Id of the member acted on (ignored by leave)' })) })
