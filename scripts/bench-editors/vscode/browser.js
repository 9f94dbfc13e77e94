// The browser side of scripts/bench-editors/vscode/run.sh: headless Chromium (playwright-
// core) loads code-server's workbench, which starts the extension host and so the
// benchmark extension, and keeps it open (rendering) until the extension writes
// bench.json or error.json.   node browser.js URL OUTDIR
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [url, out] = process.argv.slice(2);
(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let code = 3;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    // FEVLINT_BENCH_PROFILE=1: the workbench's CPU profile (Chrome's sampling profiler)
    // from when the extension starts editing the last script (it writes `profiling`) to
    // the end, written to OUTDIR/renderer.cpuprofile.
    let cdp = null;
    for (const deadline = Date.now() + 3600000; Date.now() < deadline; await page.waitForTimeout(200)) {
      if (fs.existsSync(path.join(out, 'error.json'))) { code = 4; break; }
      if (fs.existsSync(path.join(out, 'bench.json'))) { code = 0; break; }
      if (!cdp && fs.existsSync(path.join(out, 'profiling'))) {
        cdp = await page.context().newCDPSession(page);
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 1000 });
        await cdp.send('Profiler.start');
      }
    }
    if (cdp) {
      const { profile } = await cdp.send('Profiler.stop');
      fs.writeFileSync(path.join(out, 'renderer.cpuprofile'), JSON.stringify(profile));
    }
    await page.screenshot({ path: path.join(out, 'bench.png') });
  } finally {
    await browser.close();
  }
  if (code === 4) console.error(fs.readFileSync(path.join(out, 'error.json'), 'utf8'));
  if (code === 3) console.error('the benchmark extension never reported');
  process.exit(code);
})().catch((e) => { console.error(e); process.exit(1); });
