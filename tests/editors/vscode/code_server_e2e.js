// The browser side of the VS Code end-to-end test: Debian's Chromium, headless, driven by
// playwright-core, loads code-server's workbench (which makes code-server start the
// extension host), then looks at what a person sees while the harness extension steps
// through the scenario (see harness/extension.js): squiggles, the Problems count in the
// status bar, the kernels status bar item, the hover widget, and screenshots.
//
//   node code_server_e2e.js URL OUTDIR
// FEVLINT_E2E_MODE=bpf: the BPF scenario, which ends after the hover.
// Prints one JSON object; exit 0 when every step was reached, 3 when the harness never
// reported, 4 when it reported an error, 1 on a browser failure.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [url, out] = process.argv.slice(2);
const file = (n) => path.join(out, n);

async function waitFile(page, name, ms) {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await page.waitForTimeout(250)) {
    if (fs.existsSync(file('error.json'))) throw Object.assign(new Error(fs.readFileSync(file('error.json'), 'utf8')), { exit: 4 });
    if (fs.existsSync(file(name))) return JSON.parse(fs.readFileSync(file(name), 'utf8'));
  }
  throw Object.assign(new Error(`the harness never wrote ${name}`), { exit: 3 });
}

async function look(page) {
  await page.waitForTimeout(1500); // let the editor paint its decorations
  const problems = page.locator('[id="status.problems"]');
  return {
    squiggles: await page.locator('.squiggly-error, .squiggly-warning, .squiggly-info').count(),
    problems: (await problems.count()) ? await problems.first().getAttribute('aria-label') : null,
    problemsText: (await problems.count()) ? (await problems.first().innerText()).replace(/\s+/g, ' ').trim() : null,
    statusItems: (await page.locator('.statusbar-item').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()).filter(Boolean),
  };
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const report = {};
  let code = 0;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await waitFile(page, 'diagnostics.json', 240000);
    report.diagnostics = await look(page);
    await page.screenshot({ path: file('workbench.png') });
    fs.writeFileSync(file('go-hover'), '');
    await waitFile(page, 'hover.json', 60000);
    const widget = page.locator('.monaco-hover:visible, .monaco-resizable-hover:visible').first();
    try {
      await widget.waitFor({ state: 'visible', timeout: 15000 });
      report.hoverWidget = (await widget.innerText()).trim();
    } catch (e) {
      report.hoverWidget = null;
    }
    await page.screenshot({ path: file('hover.png') });
    // The BPF scenario ends with the hover.
    if (process.env.FEVLINT_E2E_MODE !== 'bpf') {
      fs.writeFileSync(file('go-fix'), '');
      await waitFile(page, 'fixed.json', 90000);
      report.fixed = await look(page);
      await page.screenshot({ path: file('fixed.png') });
      fs.writeFileSync(file('go-commands'), '');
      await waitFile(page, 'commands.json', 90000);
      await page.waitForTimeout(500);
      await page.screenshot({ path: file('commands.png') });
      fs.writeFileSync(file('go-settings'), '');
      await waitFile(page, 'settings.json', 150000);
      report.restarted = await look(page);
      fs.writeFileSync(file('go-dynevents'), '');
      await waitFile(page, 'dynevents.json', 90000);
      report.dynevents = await look(page);
      await page.screenshot({ path: file('dynevents.png') });
      fs.writeFileSync(file('go-status'), '');
      await waitFile(page, 'status.json', 60000);
      report.status = await look(page);
      await page.screenshot({ path: file('status.png') });
      fs.writeFileSync(file('go-many'), '');
      await waitFile(page, 'many.json', 90000);
      report.many = await look(page);
    }
    report.title = await page.title();
  } catch (e) {
    report.error = String((e && e.message) || e);
    code = (e && e.exit) || 1;
  } finally {
    await browser.close();
  }
  fs.writeFileSync(file('browser.json'), JSON.stringify(report, null, 1));
  console.log(JSON.stringify(report));
  process.exit(code);
})().catch((e) => { console.error(e); process.exit(1); });
