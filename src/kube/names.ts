/**
 * Kubernetes name rules (apimachinery's `validation` and `path` packages), with their messages
 * word for word: RFC 1123 labels and subdomains for object names, and the path-segment rule every
 * name placed in a URL must pass, so a name can never climb out of its path.
 */
import type { StatusCause } from './status'

const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

const isAlnum = (c: string) => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')

/** An RFC 1123 label: at most 63 lowercase alphanumerics or '-', alphanumeric at both ends. */
function isDnsLabel(s: string): boolean {
  if (!s || s.length > 63 || !isAlnum(s[0]) || !isAlnum(s[s.length - 1])) return false
  for (const c of s) if (!isAlnum(c) && c !== '-') return false
  return true
}

/** An RFC 1123 subdomain: dot-separated labels, at most 253 characters. */
export const isDnsSubdomain = (s: string): boolean => s.length <= 253 && s.split('.').every(isDnsLabel)

/**
 * Why `segment` cannot be a name in a URL path (apimachinery `IsValidPathSegmentName`): '.', '..',
 * or anything holding '/' or '%'. Empty when it can.
 */
export function pathSegmentErrors(segment: string): string[] {
  if (segment === '.' || segment === '..') return [`may not be '${segment}'`]
  const errors: string[] = []
  if (segment.includes('/')) errors.push("may not contain '/'")
  if (segment.includes('%')) errors.push("may not contain '%'")
  return errors
}

/** A FieldValueRequired cause. */
export const required = (field: string): StatusCause => ({ reason: 'FieldValueRequired', message: 'Required value', field })

/** A FieldValueInvalid cause quoting the offending value. */
export const invalidValue = (field: string, value: unknown, why: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
  field,
})

/** `metadata.name` checks every object gets: present, a path segment, and a subdomain (or a label when `labelOnly`). */
export function validateName(name: string | undefined, labelOnly: boolean): StatusCause[] {
  if (!name) return [required('metadata.name')]
  const segment = pathSegmentErrors(name)
  if (segment.length) return [invalidValue('metadata.name', name, segment.join(', '))]
  if (labelOnly ? isDnsLabel(name) : isDnsSubdomain(name)) return []
  return [invalidValue('metadata.name', name, labelOnly ? DNS1123_LABEL_MSG : DNS1123_SUBDOMAIN_MSG)]
}
