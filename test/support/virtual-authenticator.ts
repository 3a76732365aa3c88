import type { Page } from 'puppeteer-core'

/** Gives `page` Chromium's virtual security key (the DevTools WebAuthn domain): CTAP2 over USB, user presence answered at once. */
export async function addVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.createCDPSession()
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'usb',
      hasResidentKey: false,
      hasUserVerification: false,
      automaticPresenceSimulation: true,
    },
  })
}
