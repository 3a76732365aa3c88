import { render } from 'preact'
import './console.css'
import { AdminPage } from './admin'
import { CLUSTER_PAGE, ClusterPage } from './cluster'
import { ConsentPage } from './consent'
import { DevicePage } from './device'
import { HomePage } from './home'
import { NotFoundPage } from './layout'
import { LoginPage } from './login'
import { SecurityPage } from './security'
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
  '/user/settings/tokens': TokensPage,
  '/user/settings/security': SecurityPage,
  '/admin': AdminPage,
  '/usage': UsagePage,
}

const Page = PAGES[location.pathname] ?? (CLUSTER_PAGE.test(location.pathname) ? ClusterPage : NotFoundPage)
const root = document.getElementById('console')
if (root) render(<Page />, root)
