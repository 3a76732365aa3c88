/** Outcome of checking a proposed user or organization name (docs/decisions.md §1), in answer order. */
export type NameVerdict = 'INVALID' | 'RESERVED' | 'NOT_ALLOWED' | 'VALID'

const RESERVED = new Set([
  '.',
  '..',
  '.well-known',
  'admin',
  'api',
  'assets',
  'attachments',
  'avatar',
  'avatars',
  'captcha',
  'commits',
  'debug',
  'error',
  'explore',
  'favicon.ico',
  'ghost',
  'help',
  'install',
  'issues',
  'login',
  'manifest.json',
  'metrics',
  'milestones',
  'new',
  'notifications',
  'org',
  'pulls',
  'raw',
  'repo',
  'robots.txt',
  'search',
  'serviceworker.js',
  'sitemap.xml',
  'ssh_info',
  'swagger.v1.json',
  'user',
  'v2',
])
const NOT_ALLOWED_SUFFIXES = ['.keys', '.gpg', '.rss', '.atom', '.png']

/** Checks the name's form and reserved lists; existence is the caller's to check. */
export function checkName(name: string): NameVerdict {
  if (name.length === 0 || name.length > 40 || !/^[0-9A-Za-z][-.\w]*$/.test(name) || /[-._]{2}/.test(name) || /[-._]$/.test(name))
    return 'INVALID'
  const lower = name.toLowerCase()
  if (RESERVED.has(lower)) return 'RESERVED'
  if (NOT_ALLOWED_SUFFIXES.some((suffix) => lower.endsWith(suffix))) return 'NOT_ALLOWED'
  return 'VALID'
}
