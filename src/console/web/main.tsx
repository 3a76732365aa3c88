import { render } from 'preact'
import './console.css'
import { AdminPage } from './admin'
import { ApplicationsPage } from './applications'
import { CLUSTER_PAGE, ClusterPage } from './cluster'
import { ConsentPage } from './consent'
import { DevicePage } from './device'
import { HomePage } from './home'
import { NotFoundPage } from './layout'
import { LoginPage } from './login'
import { ORG_PAGE, OrgPage } from './org'
import { NewOrgPage, OrgsPage } from './orgs'
import { SecurityPage } from './security'
import { SettingsPage } from './settings'
import { TokensPage } from './tokens'
import { UsagePage } from './usage'

/**
 * Each page is a server path (src/console/routes.ts serves the same document for all of them); the script
 * shows the view of the path it was loaded at. Links are ordinary links: no client-side router.
 */
const PAGES: Record<string, () => preact.JSX.Element> = {
  '/': HomePage,
  '/login': LoginPage,
  '/login/oauth/authorize': ConsentPage,
  '/login/device': DevicePage,
  '/user/settings': SettingsPage,
  '/user/settings/applications': ApplicationsPage,
  '/user/settings/tokens': TokensPage,
  '/user/settings/security': SecurityPage,
  '/orgs': OrgsPage,
  '/orgs/new': NewOrgPage,
  '/admin': AdminPage,
  '/usage': UsagePage,
}

/** Pages named by what they show, tried in turn when the path is none of PAGES. */
const PAGE_PATTERNS: [RegExp, () => preact.JSX.Element][] = [
  [CLUSTER_PAGE, ClusterPage],
  [ORG_PAGE, OrgPage],
]

const Page = PAGES[location.pathname] ?? PAGE_PATTERNS.find(([pattern]) => pattern.test(location.pathname))?.[1] ?? NotFoundPage
const root = document.getElementById('console')
if (root) render(<Page />, root)
