// Renders media/icon-large.svg to media/icon.png (128×128), the Marketplace's icon (it takes no SVG),
// in Chromium: `node --import tsx scripts/renderIcon.ts`. The PNG is committed; run this after
// changing the SVG.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const MEDIA = join(__dirname, '..', 'media');

async function main(): Promise<void> {
  const svg = readFileSync(join(MEDIA, 'icon-large.svg'), 'utf8');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
    await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path: join(MEDIA, 'icon.png'), omitBackground: true });
  } finally {
    await browser.close();
  }
}

void main();
