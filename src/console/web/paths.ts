/**
 * `target` when it is a path on this site (starts with one `/`, stays on this origin), else `/`: a sign-in
 * never sends the browser to another site, whatever `redirect_to` says.
 */
export function pathOnThisSite(target: string | null, origin: string): string {
  if (!target?.startsWith('/') || target.startsWith('//') || target.startsWith('/\\')) return '/'
  const url = URL.canParse(target, origin) ? new URL(target, origin) : undefined
  return url && url.origin === origin ? url.pathname + url.search + url.hash : '/'
}

/** The sign-in page that comes back to `path` afterwards. */
export const signInPath = (path: string) => (path === '/' ? '/login' : `/login?redirect_to=${encodeURIComponent(path)}`)

/** The console's page of a cluster (`/clusters/<owner>/<name>`). */
export const clusterPagePath = (cluster: { ownerName: string; name: string }) =>
  `/clusters/${encodeURIComponent(cluster.ownerName)}/${encodeURIComponent(cluster.name)}`
