import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * The browser of the console's tests: the machine's Chromium (Debian's `chromium` package; .ci/run
 * installs it), driven by playwright-core — browser downloads are not possible here. CHROMIUM_PATH
 * points elsewhere. A missing browser fails the suite loudly; CONSOLE_BROWSER_TESTS=skip is the
 * only way to skip it, and it says so.
 */
const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

function chromiumPath(): string | null {
  const given = process.env.CHROMIUM_PATH;
  if (given) return given;
  return CHROMIUM_CANDIDATES.find((candidate) => fs.existsSync(candidate)) ?? null;
}

export const browserTestsSkipped = process.env.CONSOLE_BROWSER_TESTS === 'skip';

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    throw new Error(
      `No Chromium for the console's browser tests (looked for CHROMIUM_PATH and ${CHROMIUM_CANDIDATES.join(', ')}). ` +
        'Install it (Debian: apt-get install chromium; .ci/run does), or set CONSOLE_BROWSER_TESTS=skip to skip these tests knowingly.',
    );
  }
  // --no-sandbox: CI and these machines run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
