import { AdminAudit } from './admin-audit'
import { AdminUsers } from './admin-users'
import { SignedInLayout, useMe } from './layout'

/**
 * `/admin` (docs/decisions.md §11): for site administrators, the users (create, disable, enable) and the audit
 * trail with its filters; anyone else gets a plain sentence and no admin content (the API would refuse it anyway).
 */
export function AdminPage() {
  const me = useMe()
  return (
    <SignedInLayout title="Administration" me={me}>
      {me && !me.isAdmin && <p>Only site administrators can use this page.</p>}
      {me?.isAdmin && (
        <>
          <AdminUsers me={me.login} />
          <AdminAudit />
        </>
      )}
    </SignedInLayout>
  )
}
