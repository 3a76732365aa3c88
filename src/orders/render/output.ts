import { parseAllDocuments } from 'yaml'
import { AppError } from '../../errors'

/**
 * Reads `helm template --include-crds` output back into documents (reference §3.4): every
 * document is `---\n# Source: <path>\n<content>\n`, CRDs first, then manifests, then hooks.
 */

export interface RenderedDoc {
  /** The template (or CRD file) path Helm names in `# Source:`. */
  source: string
  /** The document exactly as Helm printed it, without the header and the final newline. */
  content: string
  /** The parsed objects of the document (a CRD file may hold several); parsed on first use. */
  readonly objects: Record<string, unknown>[]
  /** Hook events from the `helm.sh/hook` annotation; empty for plain manifests. */
  hooks: string[]
}

export interface Rendered {
  crds: RenderedDoc[]
  /** Pre-install hooks, the manifests in Helm's order, post-install hooks: the order manifest. */
  manifest: RenderedDoc[]
}

const HEADER = /^---\n# Source: (.*)\n/m
// Helm names CRD files `<chart>/crds/<file>`, also below subcharts (`<chart>/charts/<sub>/crds/<file>`).
const CRD_SOURCE = /^[^/]+(\/charts\/[^/]+)*\/crds\//

/** The objects of a document; a chart can print YAML we refuse to expand (an alias bomb): invalid, naming the template. */
function objectsOf(source: string, content: string): Record<string, unknown>[] {
  try {
    return parseAllDocuments(content, { version: '1.1' })
      .map((doc) => doc.toJS({ maxAliasCount: 1000 }) as unknown)
      .filter((o): o is Record<string, unknown> => !!o && typeof o === 'object' && !Array.isArray(o))
  } catch (error) {
    throw new AppError('invalid', `the chart's output ${source} cannot be read: ${(error as Error).message.split('\n')[0]}`)
  }
}

function hooksOf(object: Record<string, unknown> | undefined): string[] {
  const annotations = (object?.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations
  const value = annotations?.['helm.sh/hook']
  return typeof value === 'string'
    ? value
        .split(',')
        .map((h) => h.trim())
        .filter(Boolean)
    : []
}

/**
 * A document whose objects are parsed only when asked for: the manifest route needs none, and
 * YAML parsing is most of our cost beside Helm's. Only a document that mentions the hook
 * annotation is parsed at once, to read its events.
 */
function renderedDoc(source: string, content: string): RenderedDoc {
  let parsed: Record<string, unknown>[] | undefined
  const objects = () => (parsed ??= objectsOf(source, content))
  const hooks = content.includes('helm.sh/hook') ? hooksOf(objects()[0]) : []
  return {
    source,
    content,
    hooks,
    get objects() {
      return objects()
    },
  }
}

/** Splits Helm's output into CRDs and the order manifest (pre-install hooks, manifests, post-install hooks; other hooks dropped). */
export function readTemplateOutput(output: string): Rendered {
  const parts = output.split(HEADER)
  const crds: RenderedDoc[] = []
  const manifests: RenderedDoc[] = []
  const pre: RenderedDoc[] = []
  const post: RenderedDoc[] = []
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const source = parts[i]!
    const body = parts[i + 1]!
    const content = body.endsWith('\n') ? body.slice(0, -1) : body
    const doc = renderedDoc(source, content)
    if (CRD_SOURCE.test(source)) crds.push(doc)
    else if (doc.hooks.length === 0) manifests.push(doc)
    else {
      if (doc.hooks.includes('pre-install')) pre.push(doc)
      if (doc.hooks.includes('post-install')) post.push(doc)
    }
  }
  return { crds, manifest: [...pre, ...manifests, ...post] }
}

/** A document as Helm prints it. */
export const printDoc = (doc: Pick<RenderedDoc, 'source' | 'content'>) => `---\n# Source: ${doc.source}\n${doc.content}\n`
