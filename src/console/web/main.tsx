import { render } from 'preact'
import './console.css'
import { ApplicationsPage } from './applications'
import { CLUSTER_PAGE, ClusterPage } from './cluster'
import { ConsentPage } from './consent'
import { DevicePage } from './device'
import { HomePage } from './home'
import { NotFoundPage } from './layout'
import { LoginPage } from './login'
import { SecurityPage } from './security'
import { SettingsPage } from './settings'
import { TokensPage } from './tokens'

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
}

const Page = PAGES[location.pathname] ?? (CLUSTER_PAGE.test(location.pathname) ? ClusterPage : NotFoundPage)
const root = document.getElementById('console')
if (root) render(<Page />, root)
